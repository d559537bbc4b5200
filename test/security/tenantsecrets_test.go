package security_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/secrets"
	"github.com/clever-operator/clever-operator/test/kube"
)

// The Secrets the operator keeps in a tenant's namespace are the tenant's to edit: these specs
// edit them as team-b's editor would (tenantClient) and check that nothing of team-a's reaches
// team-b, and that team-b's labelled Secrets do not grow the operator's memory.

// forgeSource sets annotations on team-b's source Secret of u, as its editor, and asks for a
// refresh of u (both are edits the built-in `edit` role allows).
func forgeSource(b client.Client, u *unstructured.Unstructured, kindLower string, ann map[string]string) {
	GinkgoHelper()
	ctx := context.Background()
	key := client.ObjectKey{Namespace: u.GetNamespace(), Name: u.GetName() + "-" + kindLower + "-source"}
	Eventually(func() error {
		sec := &corev1.Secret{}
		if err := b.Get(ctx, key, sec); err != nil {
			return err
		}
		for k, v := range ann {
			sec.Annotations[k] = v
		}
		return b.Update(ctx, sec)
	}).Should(Succeed())
	annotateAs(b, u, map[string]string{kinds.AnnotationReconcileRequestedAt: time.Now().Format(time.RFC3339Nano)})
}

// credentialValues are the values of the add-on credentials u published (its source
// Secret's data): each names that add-on alone (host, user, password, URI).
func credentialValues(u *unstructured.Unstructured, kindLower string) []string {
	GinkgoHelper()
	sec := suite.Secret(u.GetNamespace(), u.GetName()+"-"+kindLower+"-source")
	Expect(sec).NotTo(BeNil())
	var out []string
	for k, v := range sec.Data {
		if strings.Contains(k, "PASSWORD") || strings.Contains(k, "USER") || strings.Contains(k, "HOST") || strings.Contains(k, "URI") {
			out = append(out, string(v))
		}
	}
	Expect(out).NotTo(BeEmpty())
	return out
}

// expectSourceRestored waits until the operator has written u's source Secret back: its own
// add-on id, a signature.
func expectSourceRestored(u *unstructured.Unstructured, kindLower, ownID string) {
	GinkgoHelper()
	Eventually(func() string {
		sec := suite.Secret(u.GetNamespace(), u.GetName()+"-"+kindLower+"-source")
		if sec == nil {
			return ""
		}
		return sec.Annotations[kinds.AnnotationAddonID]
	}).Should(Equal(ownID), "the operator writes the source Secret again, with the resource's own add-on")
}

var _ = Describe("a tenant (team-b) editing the Secrets the operator keeps in its namespace", func() {
	It("cannot have team-a's database credentials published by naming team-a's add-on in its source Secret", func() {
		w := newWorld()
		db, idA, _ := teamAPostgres(w)
		valuesA := credentialValues(db, "postgresql")
		creds := grantTeamB(w, w.orgA, nil) // team-b may create in team-a's organisation, not bind
		b := tenantClient(w.teamB)
		mine := withRef(sample("api_v1_postgresql.yaml", w.teamB, "mine", w.orgA), "ClusterCleverCredentials", creds)
		Expect(b.Create(context.Background(), mine)).To(Succeed())
		Eventually(suite.ReadyOf(mine)).Should(Equal("True/Provisioned"))
		ownID := kube.StatusString(suite.Get(mine), "addon")

		forgeSource(b, mine, "postgresql", map[string]string{kinds.AnnotationAddonID: idA})
		Consistently(func() []string { return secretValues(w.teamB) }, 5*time.Second).ShouldNot(ContainElement(BeElementOf(valuesA)), "none of team-a's credentials reaches team-b")
		expectSourceRestored(mine, "postgresql", ownID)
		expectNoneOf(w.teamB, valuesA)
		Eventually(suite.ReadyOf(mine)).Should(Equal("True/Provisioned"))
		Expect(kube.StatusString(suite.Get(mine), "addon")).To(Equal(ownID))
	})

	It("cannot write team-a's config provider by naming its real id in its own source Secret", func() {
		w := newWorld()
		cpA := ready(sample("api_v1_configprovider.yaml", w.teamA, "conf", w.orgA))
		idA := kube.StatusString(cpA, "addon")
		before := fmt.Sprint(fake.Env(idA))
		Expect(before).To(ContainSubstring("m_med"))
		realA := ""
		for _, a := range fake.Addons(w.orgA) {
			if a.ID == idA {
				realA = a.RealID
			}
		}
		Expect(realA).NotTo(BeEmpty())

		creds := grantTeamB(w, w.orgA, nil)
		b := tenantClient(w.teamB)
		mine := withRef(sample("api_v1_configprovider.yaml", w.teamB, "mine", w.orgA), "ClusterCleverCredentials", creds)
		Expect(unstructured.SetNestedStringMap(mine.Object, map[string]string{"DATABASE_URL": "postgres://team-b.example/steal"}, "spec", "variables")).To(Succeed())
		Expect(b.Create(context.Background(), mine)).To(Succeed())
		Eventually(suite.ReadyOf(mine)).Should(Equal("True/Provisioned"))
		ownID := kube.StatusString(suite.Get(mine), "addon")

		forgeSource(b, mine, "configprovider", map[string]string{secrets.AnnotationRealID: realA})
		Consistently(func() string { return fmt.Sprint(fake.Env(idA)) }, 5*time.Second).Should(Equal(before), "team-a's variables are unchanged")
		expectSourceRestored(mine, "configprovider", ownID)
		Expect(fmt.Sprint(fake.Env(ownID))).To(ContainSubstring("team-b.example"))
	})

	It("cannot grow the operator's memory with Secrets carrying the operator's labels: 300 × 1 MB cost the cache their metadata only", func() {
		w := newWorld()
		b := tenantClient(w.teamB)
		ctx := context.Background()
		heap := func() uint64 {
			runtime.GC()
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return m.HeapAlloc
		}
		before, rssBefore := heap(), rss()
		payload := strings.Repeat("x", 1<<20-1024)
		labels := map[string]string{kinds.LabelManagedBy: kinds.ManagedByValue, kinds.LabelRole: kinds.RoleSource, kinds.LabelKind: "postgresql"}
		const n = 300
		for i := range n {
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: "big-" + strconv.Itoa(i) + "-postgresql-source", Labels: labels,
				Annotations: map[string]string{secrets.AnnotationSignature: "v1/forged"}},
				Data: map[string][]byte{"POSTGRESQL_ADDON_PASSWORD": []byte(payload)}}
			Expect(b.Create(ctx, sec)).To(Succeed())
		}
		DeferCleanup(func() {
			_ = k8s.DeleteAllOf(context.Background(), &corev1.Secret{}, client.InNamespace(w.teamB), client.MatchingLabels(labels))
		})
		// The cache has seen them all (metadata only).
		Eventually(func() int {
			var l corev1.SecretList
			Expect(mgr.GetCache().List(ctx, &l, client.InNamespace(w.teamB), client.MatchingLabels(labels))).To(Succeed())
			withData := 0
			for _, s := range l.Items {
				if len(s.Data) > 0 {
					withData++
				}
			}
			Expect(withData).To(BeZero(), "no forged Secret is cached with its data")
			return len(l.Items)
		}, time.Minute).Should(Equal(n))
		after, rssAfter := heap(), rss()
		grown := int64(after) - int64(before)
		GinkgoWriter.Printf("300 × 1 MB labelled Secrets: heap %d → %d MiB (%+d MiB), RSS %d → %d MiB\n",
			before>>20, after>>20, grown>>20, rssBefore>>20, rssAfter>>20)
		AddReportEntry("heap growth for 300 × 1 MB labelled Secrets (MiB)", grown>>20)
		Expect(grown).To(BeNumerically("<", 16<<20), "the operator's heap grows by their metadata, not their 300 MB")
	})
})

// rss is this process's resident set (the operator runs in it), in bytes.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
