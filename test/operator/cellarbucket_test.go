package operator_test

import (
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/test/kube"
)

// cellarEndpoints maps a Cellar key id to the local S3 server of the spec that owns that
// Cellar (the operator's CellarEndpoint): each spec has its own server.
var cellarEndpoints sync.Map

func cellarEndpoint(host, keyID string) (string, bool) {
	if e, ok := cellarEndpoints.Load(keyID); ok {
		return e.(string), false
	}
	return host, true // not a spec's: the real host (unreachable here)
}

// Cellar buckets (#18 §2): a CellarBucket makes a bucket through Cellar's S3 API with the
// Cellar add-on's keys, against an S3 implementation in the test process (gofakes3).
var _ = Describe("cellar buckets", func() {
	ctx := context.Background()

	// readyCellar makes a Cellar and the local S3 server that accepts its keys.
	readyCellar := func(ns string) (*unstructured.Unstructured, *kube.S3Server, map[string]string) {
		GinkgoHelper()
		cellar := suite.Sample("api_v1_cellar.yaml", ns)
		Expect(k8s.Create(ctx, cellar)).To(Succeed())
		Eventually(suite.ReadyOf(cellar), 30*time.Second).Should(Equal("True/Provisioned"))
		env := map[string]string{}
		for _, v := range fake.Env(kube.StatusString(suite.Get(cellar), "addon")) {
			env[v.Name] = v.Value
		}
		Expect(env).To(HaveKey("CELLAR_ADDON_KEY_ID"))
		s3 := kube.NewS3Server(env["CELLAR_ADDON_KEY_ID"])
		cellarEndpoints.Store(env["CELLAR_ADDON_KEY_ID"], s3.Endpoint())
		DeferCleanup(func() { cellarEndpoints.Delete(env["CELLAR_ADDON_KEY_ID"]); s3.Close() })
		return cellar, s3, env
	}
	newBucket := func(ns, name string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "api.clever-cloud.com/v1alpha1", "kind": "CellarBucket",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     spec,
		}}
	}
	secretOf := func(ns, name string) func() map[string]string {
		return func() map[string]string { return kube.SecretData(suite.Secret(ns, name)) }
	}

	It("makes a bucket, publishes it, versions it, applies a policy, and keeps it when it holds objects", func() {
		ns := suite.NewNamespace()
		cellar, s3, env := readyCellar(ns)
		b := newBucket(ns, "assets", map[string]any{
			"cellar":     map[string]any{"name": cellar.GetName()},
			"versioning": true,
			"policy":     map[string]any{"publicRead": true},
		})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Eventually(suite.ReadyOf(b), 30*time.Second).Should(Equal("True/Available"))
		live := suite.Get(b)
		name := kube.StatusString(live, "bucketName")
		Expect(name).To(Equal("assets-" + string(live.GetUID())[:8]))
		Expect(s3.BucketExists(name)).To(BeTrue())
		Expect(s3.Versioning(name)).To(Equal("Enabled"))
		Expect(kube.StatusString(live, "versioning")).To(Equal("Enabled"))
		Expect(s3.Policy(name)).To(And(ContainSubstring(`"s3:GetObject"`), ContainSubstring(`"arn:aws:s3:::`+name+`/*"`)))
		Eventually(secretOf(ns, "assets-bucket")).Should(And(
			HaveKeyWithValue("BUCKET_NAME", name),
			HaveKeyWithValue("BUCKET_HOST", env["CELLAR_ADDON_HOST"]),
			HaveKeyWithValue("BUCKET_URL", "https://"+env["CELLAR_ADDON_HOST"]+"/"+name),
			HaveKeyWithValue("CELLAR_ADDON_KEY_ID", env["CELLAR_ADDON_KEY_ID"]),
			HaveKeyWithValue("CELLAR_ADDON_KEY_SECRET", env["CELLAR_ADDON_KEY_SECRET"])))
		Eventually(suite.EventsOf(b)).Should(ContainElement("Normal BucketCreated"))

		// Versioning off is a suspension (S3 keeps the versions); the policy goes.
		suite.Mutate(b, func(live *unstructured.Unstructured) {
			Expect(unstructured.SetNestedField(live.Object, false, "spec", "versioning")).To(Succeed())
			unstructured.RemoveNestedField(live.Object, "spec", "policy")
		})
		Eventually(func() string { return s3.Versioning(name) }, 20*time.Second).Should(Equal("Suspended"))
		Eventually(func() string { return s3.Policy(name) }, 20*time.Second).Should(BeEmpty())
		Eventually(func() string { return kube.StatusString(suite.Get(b), "versioning") }).Should(Equal("Suspended"))

		// Holding objects, with no deletion policy: kept, and said.
		Expect(s3.PutObject(name, "logo.png", "png")).To(Succeed())
		Expect(k8s.Delete(ctx, b)).To(Succeed())
		Eventually(func() bool { return suite.Get(b) == nil }, 30*time.Second).Should(BeTrue())
		Expect(s3.BucketExists(name)).To(BeTrue(), "never deleted silently")
		Expect(s3.Objects(name)).To(Equal(1))
		Eventually(func() []string { return suite.EventsByName(ns, "CellarBucket", "assets") }).Should(ContainElement("Warning BucketKept"))
		Expect(s3.Requests("DELETE")).To(BeZero())
	})

	It("under deletionPolicy Delete, deletes an empty bucket, waits for a full one until told to empty it", func() {
		ns := suite.NewNamespace()
		cellar, s3, _ := readyCellar(ns)
		empty := newBucket(ns, "scratch", map[string]any{"cellar": map[string]any{"name": cellar.GetName()}})
		full := newBucket(ns, "uploads", map[string]any{"cellar": map[string]any{"name": cellar.GetName()},
			"bucketName": "uploads-" + ns, "deletionPolicy": "Delete", "versioning": true})
		Expect(k8s.Create(ctx, empty)).To(Succeed())
		Expect(k8s.Create(ctx, full)).To(Succeed())
		Eventually(suite.ReadyOf(empty), 30*time.Second).Should(Equal("True/Available"))
		Eventually(suite.ReadyOf(full), 30*time.Second).Should(Equal("True/Available"))
		emptyName := kube.StatusString(suite.Get(empty), "bucketName")
		Expect(kube.StatusString(suite.Get(full), "bucketName")).To(Equal("uploads-" + ns))

		// An empty bucket goes with its resource (no deletion policy needed).
		Expect(k8s.Delete(ctx, empty)).To(Succeed())
		Eventually(func() bool { return suite.Get(empty) == nil }, 30*time.Second).Should(BeTrue())
		Expect(s3.BucketExists(emptyName)).To(BeFalse())

		// A full one under Delete: the resource stays, and says why.
		Expect(s3.PutObject("uploads-"+ns, "a.txt", "v1")).To(Succeed())
		Expect(s3.PutObject("uploads-"+ns, "a.txt", "v2")).To(Succeed()) // two versions
		Expect(k8s.Delete(ctx, full)).To(Succeed())
		Eventually(suite.ReadyOf(full), 30*time.Second).Should(Equal("False/BucketNotEmpty"))
		Expect(kube.ConditionMessage(suite.Get(full), "Ready")).To(ContainSubstring("api.clever-cloud.com/delete-bucket-contents=true"))
		Consistently(func() bool { return suite.Get(full) != nil }, 2*time.Second).Should(BeTrue())
		Expect(s3.BucketExists("uploads-" + ns)).To(BeTrue())

		// Told: its objects (every version) and the bucket go.
		suite.Annotate(full, map[string]string{"api.clever-cloud.com/delete-bucket-contents": "true"})
		Eventually(func() bool { return suite.Get(full) == nil }, 30*time.Second).Should(BeTrue())
		Expect(s3.BucketExists("uploads-" + ns)).To(BeFalse())
		Eventually(func() []string { return suite.EventsByName(ns, "CellarBucket", "uploads") }).Should(ContainElements("Normal BucketEmptied", "Normal BucketDeleted"))
	})

	It("waits for its Cellar, takes a Cellar add-on by id, and refuses a policy that is not JSON", func() {
		ns := suite.NewNamespace()
		b := newBucket(ns, "early", map[string]any{"cellar": map[string]any{"name": "cellar"}})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Eventually(suite.ReadyOf(b), 30*time.Second).Should(Equal("False/CellarNotFound"))

		cellar, s3, _ := readyCellar(ns) // the sample is named "cellar": the bucket wakes
		Eventually(suite.ReadyOf(b), 30*time.Second).Should(Equal("True/Available"))
		Expect(s3.BucketExists(kube.StatusString(suite.Get(b), "bucketName"))).To(BeTrue())

		byID := newBucket(ns, "by-id", map[string]any{"cellar": map[string]any{
			"addonId": kube.StatusString(suite.Get(cellar), "addon"), "organisation": suite.OrgOf(ns)}})
		Expect(k8s.Create(ctx, byID)).To(Succeed())
		Eventually(suite.ReadyOf(byID), 30*time.Second).Should(Equal("True/Available"))

		bad := newBucket(ns, "bad-policy", map[string]any{"cellar": map[string]any{"name": cellar.GetName()},
			"policy": map[string]any{"raw": "{not json"}})
		Expect(k8s.Create(ctx, bad)).To(Succeed())
		Eventually(suite.ReadyOf(bad), 30*time.Second).Should(Equal("False/InvalidSpec"))
		Expect(kube.Condition(suite.Get(bad), "Stalled")).To(HavePrefix("True"))

		// CEL: one Cellar reference, immutable names.
		both := newBucket(ns, "both", map[string]any{"cellar": map[string]any{"name": "cellar", "addonId": "addon_x", "organisation": suite.OrgOf(ns)}})
		Expect(k8s.Create(ctx, both)).To(MatchError(ContainSubstring("not both")))
		live := suite.Get(b)
		Expect(unstructured.SetNestedField(live.Object, "renamed-bucket", "spec", "bucketName")).To(Succeed())
		Expect(k8s.Update(ctx, live)).To(MatchError(ContainSubstring("immutable")))

		for _, u := range []*unstructured.Unstructured{b, byID, bad, cellar} {
			Expect(k8s.Delete(ctx, u)).To(Succeed())
		}
		for _, u := range []*unstructured.Unstructured{b, byID, bad, cellar} {
			Eventually(func() bool { return suite.Get(u) == nil }, 30*time.Second).Should(BeTrue())
		}
	})
})
