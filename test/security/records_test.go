package security_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/test/kube"
)

// Issue #43, point 3: the Helm side keeps each resource's release as sh.helm.release.v1.*
// Secrets of the resource's namespace, which the namespace's editors can write, and Helm acts
// on the manifest a record names: an upgrade deletes what the new render lacks, an uninstall
// deletes everything, wherever it is. The operator refuses a record naming anything but the
// Secrets and ConfigMaps of its own namespace (internal/hybrid/records.go).

// latestRecord is the highest revision's release record Secret of the only release of ns.
func latestRecord(c client.Client, ns string) *corev1.Secret {
	GinkgoHelper()
	var list corev1.SecretList
	Expect(c.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"})).To(Succeed())
	Expect(list.Items).NotTo(BeEmpty(), "release records in %s", ns)
	var top *corev1.Secret
	for i := range list.Items {
		s := &list.Items[i]
		if top == nil || version(s) > version(top) {
			top = s
		}
	}
	return top
}

func version(s *corev1.Secret) int {
	v, _ := strconv.Atoi(s.Labels["version"])
	return v
}

// decodeRelease and encodeRelease are Helm's encoding of a record: JSON, gzip, base64.
func decodeRelease(s *corev1.Secret) *release.Release {
	GinkgoHelper()
	b, err := base64.StdEncoding.DecodeString(string(s.Data["release"]))
	Expect(err).NotTo(HaveOccurred())
	r, err := gzip.NewReader(bytes.NewReader(b))
	Expect(err).NotTo(HaveOccurred())
	b, err = io.ReadAll(r)
	Expect(err).NotTo(HaveOccurred())
	rls := &release.Release{}
	Expect(json.Unmarshal(b, rls)).To(Succeed())
	return rls
}

func encodeRelease(rls *release.Release) []byte {
	GinkgoHelper()
	b, err := json.Marshal(rls)
	Expect(err).NotTo(HaveOccurred())
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err = w.Write(b)
	Expect(err).NotTo(HaveOccurred())
	Expect(w.Close()).To(Succeed())
	return []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))
}

// forgeLatest is the tenant (client c) appending the victims to its latest release record;
// returns the record's name.
func forgeLatest(c client.Client, ns string, victims string) string {
	GinkgoHelper()
	var name string
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rec := latestRecord(c, ns)
		rls := decodeRelease(rec)
		rls.Manifest += victims
		rec.Data["release"] = encodeRelease(rls)
		name = rec.Name
		return c.Update(context.Background(), rec)
	})).To(Succeed())
	GinkgoWriter.Printf("forged %s/%s\n", ns, name)
	return name
}

// helmRefusal is the message of the Helm side's failure conditions naming the record, if any.
func helmRefusal(u *unstructured.Unstructured, record string) func() string {
	return func() string {
		cur := suite.Get(u)
		for _, t := range []string{"Irreconcilable", "ReleaseFailed"} {
			if m := kube.ConditionMessage(cur, t); kube.Condition(cur, t) != "" && bytes.Contains([]byte(m), []byte(record)) {
				return m
			}
		}
		return ""
	}
}

var _ = Describe("a tenant (team-b) forging its Helm release record", func() {
	It("cannot make the operator delete team-a's or kube-system's objects by upgrade or uninstall: the release record is refused until deleted", func() {
		w := newWorld()
		forB := grantTeamB(w, w.orgB, nil)
		db := ready(withRef(sample("api_v1_postgresql.yaml", w.teamB, "db", w.orgB), "ClusterCleverCredentials", forB))
		ctx := context.Background()

		// The victims, created by an admin.
		victimA := &corev1.Secret{}
		victimA.Namespace, victimA.Name = w.teamA, "victim"
		victimA.StringData = map[string]string{"k": "team-a's"}
		victimSys := &corev1.ConfigMap{}
		victimSys.Namespace, victimSys.Name = "kube-system", "victim-"+w.teamB
		victimSys.Data = map[string]string{"k": "the cluster's"}
		Expect(k8s.Create(ctx, victimA)).To(Succeed())
		Expect(k8s.Create(ctx, victimSys)).To(Succeed())
		DeferCleanup(func() { _ = k8s.Delete(context.Background(), victimSys) })
		victims := fmt.Sprintf("\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\n"+
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n",
			victimA.Name, victimA.Namespace, victimSys.Name, victimSys.Namespace)
		rvA, rvSys := victimA.ResourceVersion, victimSys.ResourceVersion
		expectVictimsIntact := func(what string) {
			GinkgoHelper()
			a, sys := &corev1.Secret{}, &corev1.ConfigMap{}
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(victimA), a)).To(Succeed(), "%s: team-a's Secret still exists", what)
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(victimSys), sys)).To(Succeed(), "%s: kube-system's ConfigMap still exists", what)
			Expect(a.ResourceVersion).To(Equal(rvA), "%s: team-a's Secret unchanged", what)
			Expect(sys.ResourceVersion).To(Equal(rvSys), "%s: kube-system's ConfigMap unchanged", what)
		}

		b := tenantClient(w.teamB)

		By("an upgrade over the forged record")
		record := forgeLatest(b, w.teamB, victims)
		mutateAs(b, db, func(live *unstructured.Unstructured) {
			Expect(unstructured.SetNestedStringMap(live.Object, map[string]string{"forged": "upgrade"}, "spec", "secret", "labels")).To(Succeed())
		})
		Eventually(helmRefusal(db, record)).Should(ContainSubstring("Delete that record Secret"), "the resource reports the refused record")
		Eventually(func() string { return kube.ConditionMessage(suite.Get(db), "Ready") }).Should(ContainSubstring(record), "Ready names the record")
		Eventually(func() []string { return suite.Warnings(w.teamB, db.GetName()) }).Should(ContainElement(status.ReasonReleaseRecordRefused))
		GinkgoWriter.Printf("refused: %s\n", helmRefusal(db, record)())
		Consistently(helmRefusal(db, record), 3*time.Second).ShouldNot(BeEmpty(), "still refused")
		expectVictimsIntact("upgrade")

		By("the tenant deletes the forged record: the resource recovers")
		Expect(b.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: record}})).To(Succeed())
		Eventually(func() string {
			var s corev1.Secret
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: w.teamB, Name: "db-secrets"}, &s); err != nil {
				return err.Error()
			}
			return s.Labels["forged"]
		}).WithTimeout(time.Minute).Should(Equal("upgrade"), "the upgrade is rendered")
		Eventually(suite.ReadyOf(db)).Should(Equal("True/Provisioned"))
		Eventually(func() string { return kube.Condition(suite.Get(db), "Irreconcilable") }).Should(HavePrefix("False"))
		expectVictimsIntact("after recovery")

		By("an uninstall over the forged record")
		record = forgeLatest(b, w.teamB, victims)
		Expect(b.Delete(ctx, suite.Get(db))).To(Succeed())
		Eventually(helmRefusal(db, record)).Should(ContainSubstring("Delete that record Secret"), "the resource reports the refused record")
		Consistently(func() bool { return suite.Get(db) != nil }, 3*time.Second).Should(BeTrue(), "the uninstall waits")
		expectVictimsIntact("uninstall")

		By("the tenant deletes the forged record: the uninstall completes")
		Expect(b.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: record}})).To(Succeed())
		Eventually(suite.GetOf(db)).WithTimeout(time.Minute).Should(BeNil(), "the resource is deleted")
		// (With its only record deleted, Helm finds no release and lets the resource go; its
		// credentials Secret, owned by it, is left to the garbage collector, which envtest
		// does not run.)
		expectVictimsIntact("after the uninstall")
	})
})
