package operator_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/backups"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

// backupsOf returns status.backups.count and status.backups.last.time ("" when absent).
func backupsOf(u *unstructured.Unstructured) (int64, string) {
	n, _, _ := unstructured.NestedInt64(u.Object, "status", "backups", "count")
	t, _, _ := unstructured.NestedString(u.Object, "status", "backups", "last", "time")
	return n, t
}

// staleResources is clever_operator_backup_stale_resources for a kind.
func staleResources(kind string) float64 {
	families, err := registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "clever_operator_backup_stale_resources" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == kind {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

var _ = Describe("backups", func() {
	ctx := context.Background()

	It("shows a PostgreSql's backups in status at its second refresh, at no call on creation", func() {
		ns := suite.NewNamespace()
		fastRefresh(ns)
		defer func() { mgr.Stop(); startManager() }()
		calls := suite.CountCalls(ns)
		cr := ownSample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		Expect(calls.Route(fakeapi.RouteBackups)).To(BeZero(), "creation reads no backups")
		GinkgoWriter.Printf("calls to Ready: %d, by route %v\n", calls.Matching(""), fake.CountsFor(suite.OrgOf(ns)))
		id := kube.StatusString(suite.Get(cr), "addon")
		want := fake.Backups(id)
		Expect(want).To(HaveLen(1), "the fake's first backup is taken at creation")

		// The second refresh (the first reads the add-on) reads them: one call.
		Eventually(func() int64 { n, _ := backupsOf(suite.Get(cr)); return n }, 60*time.Second).Should(Equal(int64(1)))
		_, last := backupsOf(suite.Get(cr))
		at, err := time.Parse(time.RFC3339Nano, want[0].CreationDate)
		Expect(err).NotTo(HaveOccurred())
		Expect(last).To(Equal(at.UTC().Format(time.RFC3339)))
		Expect(kube.Condition(suite.Get(cr), "BackupStale")).To(Equal("False/BackupRecent"))
		Expect(calls.Route(fakeapi.RouteBackups)).To(BeNumerically(">=", 1))
		Expect(kube.Leaks(fake.BackupSecrets(id), operatorOutput(ctx))).To(BeEmpty())
	})

	It("sets BackupStale with a Warning when the newest backup is too old, clears it when a fresh one comes, and never publishes a download URL", func() {
		ns := suite.NewNamespace()
		fastRefresh(ns)
		defer func() { mgr.Stop(); startManager() }()
		cr := ownSample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		id := kube.StatusString(suite.Get(cr), "addon")
		secrets := fake.BackupSecrets(id)

		// Clever Cloud stopped backing it up two days ago: seen within three periods.
		old := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
		Expect(fake.SetBackups(id, []time.Time{old.Add(-24 * time.Hour), old})).To(Succeed())
		secrets = append(secrets, fake.BackupSecrets(id)...)
		Eventually(func() string { return kube.Condition(suite.Get(cr), "BackupStale") }, 60*time.Second).Should(Equal("True/BackupStale"))
		n, last := backupsOf(suite.Get(cr))
		Expect(n).To(Equal(int64(2)))
		Expect(last).To(Equal(old.UTC().Format(time.RFC3339)))
		Expect(kube.ConditionMessage(suite.Get(cr), "BackupStale")).To(ContainSubstring("36h0m0s"))
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Warning BackupStale"))
		Expect(suite.ReadyOf(cr)()).To(Equal("True/Provisioned"), "a warning: Ready is untouched")
		Expect(staleResources("PostgreSql")).To(BeNumerically(">=", 1))

		// A fresh backup clears it.
		Expect(fake.SetBackups(id, []time.Time{old, time.Now()})).To(Succeed())
		secrets = append(secrets, fake.BackupSecrets(id)...)
		Eventually(func() string { return kube.Condition(suite.Get(cr), "BackupStale") }, 60*time.Second).Should(Equal("False/BackupRecent"))
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Normal BackupRecent"))

		// A maximum age that does not parse: Unknown, with a Warning naming the annotation.
		suite.Annotate(cr, map[string]string{backups.AnnotationMaxAge: "a day"})
		Eventually(func() string { return kube.Condition(suite.Get(cr), "BackupStale") }, 30*time.Second).Should(Equal("Unknown/InvalidBackupMaxAge"))
		Expect(kube.ConditionMessage(suite.Get(cr), "BackupStale")).To(ContainSubstring(backups.AnnotationMaxAge))
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Warning InvalidBackupMaxAge"))
		Expect(suite.ReadyOf(cr)()).To(Equal("True/Provisioned"))

		// None of the download URLs the fake handed out is in a status, an Event or a log line.
		Expect(secrets).NotTo(BeEmpty())
		Expect(kube.Leaks(secrets, operatorOutput(ctx))).To(BeEmpty())
	})

	It("makes no backups call for a kind Clever Cloud does not back up", func() {
		ns := suite.NewNamespace()
		fastRefresh(ns)
		defer func() { mgr.Stop(); startManager() }()
		calls := suite.CountCalls(ns)
		cr := ownSample("api_v1_azimutt.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		// Three refreshes (a PostgreSql's would have read its backups by then).
		Eventually(func() int {
			return calls.Route("GET /v2/organisations/{ownerId}/addons/{addonId}/env") + calls.Route("GET /v2/organisations/{ownerId}/addons/{addonId}")
		}, 30*time.Second).Should(BeNumerically(">=", 4))
		Expect(calls.Route(fakeapi.RouteBackups)).To(Equal(0))
		_, found, _ := unstructured.NestedMap(suite.Get(cr).Object, "status", "backups")
		Expect(found).To(BeFalse())
		Expect(kube.Condition(suite.Get(cr), "BackupStale")).To(Equal(""))
	})
})

// operatorOutput is everything the operator wrote where users or log collectors read it.
func operatorOutput(ctx context.Context) map[string]string {
	GinkgoHelper()
	texts, err := kube.OperatorOutput(ctx, k8s, logs.String())
	Expect(err).NotTo(HaveOccurred())
	return texts
}
