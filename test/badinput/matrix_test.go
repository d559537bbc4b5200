package badinput_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

// window is how long each case is watched for retries once its reason is reported.
const window = 3 * time.Second

// engineCase is a resource the API server accepts and the operator must report on.
type engineCase struct {
	// build prepares the case (override Secrets, faults, objects in the way) and returns the
	// resource to create.
	build func(c *caseCtx) *unstructured.Unstructured
	// act, when set, runs after the creation (e.g. waits for Ready, then breaks something).
	act func(c *caseCtx, obj *unstructured.Unstructured)
	// ready is the expected Ready condition, "<status>/<reason>".
	ready string
	// stalled: the reason is terminal, so Stalled=True with the same reason.
	stalled bool
	// event is the Warning event expected (default: Ready's reason).
	event string
	// message is a substring of Ready's message.
	message string
	// also are other expected conditions, "<type>" → "<status>/<reason>".
	also map[string]string
	// Bounds over the window: Clever Cloud calls for the case's organisation, engine passes
	// (reads of the namespace's override Secret), and API server requests in the namespace.
	maxAPI, maxPasses, maxKube int
	// canaryTenant ≥ 0 creates the canary with that tenant credential set (default: global).
	canaryTenant int
	// secrets must appear in no log, event or status (besides the suite-wide set).
	secrets []string
	cleanup func(c *caseCtx, obj *unstructured.Unstructured)
}

func runEngineCase(ec engineCase) {
	ctx := context.Background()
	caseSecrets.Lock()
	caseSecrets.values = append(caseSecrets.values, ec.secrets...)
	caseSecrets.Unlock()
	c := newCase()
	obj := ec.build(c)
	Expect(k8s.Create(ctx, obj)).To(Succeed())
	if ec.act != nil {
		ec.act(c, obj)
	}
	Eventually(suite.ReadyOf(obj), 60*time.Second).Should(Equal(ec.ready), "Ready of %s/%s", obj.GetNamespace(), obj.GetName())
	reason := strings.SplitN(ec.ready, "/", 2)[1]
	cur := suite.Get(obj)
	if ec.stalled {
		Expect(kube.Condition(cur, "Stalled")).To(Equal("True/"+reason), "terminal reasons set Stalled")
		Expect(kube.ConditionMessage(cur, "Stalled")).To(Equal(kube.ConditionMessage(cur, "Ready")))
	} else {
		Expect(kube.Condition(cur, "Stalled")).NotTo(HavePrefix("True/"), "a transient reason is not stalled")
	}
	if ec.message != "" {
		Expect(kube.ConditionMessage(cur, "Ready")).To(ContainSubstring(ec.message))
	}
	for t, want := range ec.also {
		Eventually(func() string { return kube.Condition(suite.Get(obj), t) }).Should(Equal(want), "condition %s", t)
	}
	event := ec.event
	if event == "" {
		event = reason
	}
	if event != "-" {
		Eventually(suite.EventsOf(obj)).Should(ContainElement("Warning "+event), "Warning event %s", event)
	} else {
		Expect(suite.Events(obj)).NotTo(ContainElement(HavePrefix("Warning ")), "a control case records no Warning")
	}

	// No hot retry: count over a window, while a canary is created and must become Ready.
	api0, kube0, pass0 := fake.CountsByOwner()[c.org], 0, 0
	kube0, pass0 = apiserver.counts(c.ns)
	tenant := ec.canaryTenant
	canary := newCanary(tenant - 1)
	time.Sleep(window)
	api1 := fake.CountsByOwner()[c.org]
	kube1, pass1 := apiserver.counts(c.ns)
	fmt.Fprintf(os.Stderr, "%-90s %-28s window %s: %2d Clever Cloud calls, %d engine passes, %2d API server requests\n",
		CurrentSpecReport().LeafNodeText, ec.ready, window, api1-api0, pass1-pass0, kube1-kube0)
	maxAPI, maxPasses, maxKube := or(ec.maxAPI, 3), or(ec.maxPasses, 3), or(ec.maxKube, 40)
	Expect(api1-api0).To(BeNumerically("<=", maxAPI), "Clever Cloud calls for %s in %s", c.org, window)
	Expect(pass1-pass0).To(BeNumerically("<=", maxPasses), "engine passes in %s", window)
	Expect(kube1-kube0).To(BeNumerically("<=", maxKube), "API server requests in namespace %s in %s", c.ns, window)
	Eventually(suite.ReadyOf(canary)).Should(Equal("True/Provisioned"), "the canary created meanwhile")
	Expect(suite.ReadyOf(obj)()).To(Equal(ec.ready), "the reason holds")

	texts, err := kube.OperatorOutput(ctx, k8s, logs.String())
	Expect(err).NotTo(HaveOccurred())
	Expect(kube.Leaks(ec.secrets, texts)).To(BeEmpty())
	if ec.cleanup != nil {
		ec.cleanup(c, obj)
	}
}

func or(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func set(u *unstructured.Unstructured, value any, path ...string) *unstructured.Unstructured {
	Expect(unstructured.SetNestedField(u.Object, value, path...)).To(Succeed())
	return u
}

// waitReady waits until the resource is Ready and returns its add-on id.
func waitReady(obj *unstructured.Unstructured) string {
	Eventually(suite.ReadyOf(obj), 60*time.Second).Should(Equal("True/Provisioned"))
	return kube.StatusString(suite.Get(obj), "addon")
}

// hugeValue is a 2 MiB value: more than a Secret may hold.
var hugeValue = strings.Repeat("h", 2<<20)

// bigValue is 200 KiB of varied characters: large, but fits in every Secret the operator
// and Helm write.
var bigValue = func() string {
	var b strings.Builder
	for i := 0; b.Len() < 200<<10; i++ {
		b.WriteString("big-value-")
		b.WriteByte("abcdefghijklmnopqrstuvwxyz0123456789"[i%36])
		b.WriteByte("0123456789abcdef"[(i*7)%16])
	}
	return b.String()
}()

const unicodeValue = "héllo wörld ✓ 日本語 🚀 secret-ünï-42"

var _ = Describe("bad input the API server accepts", func() {
	DescribeTable("is reported with a stable reason, a Warning event and backoff, and stays contained", runEngineCase,
		Entry("unknown plan slug", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				return set(c.sample("api_v1_postgresql.yaml"), "xs_nope", "spec", "instance", "plan")
			},
			ready: "False/PlanNotFound", stalled: true, message: `plan "xs_nope" not found for add-on provider "postgresql-addon"; available: `,
		}),
		Entry("empty plan (kinds whose schema allows it)", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				return set(c.sample("api_v1_metabase.yaml"), "", "spec", "instance", "plan")
			},
			ready: "False/PlanNotFound", stalled: true, message: "spec.instance.plan is required",
		}),
		Entry("a version Clever Cloud does not offer (no enum in the CRD: checked against the provider)", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				// A dedicated plan: shared (DEV) plans take no version, and are not checked.
				pg := set(c.sample("api_v1_postgresql.yaml"), "xs_sml", "spec", "instance", "plan")
				return set(pg, int64(10), "spec", "options", "version")
			},
			ready: "False/VersionNotAvailable", stalled: true, message: "spec.options.version 10 (10) is not offered by Clever Cloud for postgresql-addon; available: ",
		}),
		Entry("unknown region", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				return set(c.sample("api_v1_redis.yaml"), "mars", "spec", "instance", "region")
			},
			ready: "False/InvalidSpec", stalled: true, message: `region "mars" is not available for provider redis-addon`,
		}),
		Entry("empty region (kinds whose schema allows it)", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				return set(c.sample("api_v1_metabase.yaml"), "", "spec", "instance", "region")
			},
			ready: "False/InvalidSpec", stalled: true, message: "spec.instance.region is required",
		}),
		Entry("plan not offered in the region", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				return set(c.sample("api_v1_postgresql.yaml"), "sgp", "spec", "instance", "region")
			},
			ready: "False/InvalidSpec", stalled: true, message: `plan dev of provider postgresql-addon is not available in region "sgp"`,
		}),
		Entry("malformed organisation id", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				return set(c.sample("api_v1_redis.yaml"), "acme-corp", "spec", "organisation")
			},
			ready: "False/InvalidSpec", stalled: true, message: `spec.organisation "acme-corp" is not`,
		}),
		Entry("organisation the credentials cannot access (403)", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				setOwnerFault(c.org, fakeapi.OwnerFault{Status: 403})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/InvalidCredentials", stalled: true, message: "403 You don't have access to this organisation; the credentials in use (the operator's, or the namespace's clever-operator Secret) cannot access organisation orga_",
		}),
		Entry("override Secret that does not parse", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				c.override(map[string]string{"config": "[api\ntoken = \"bi-broken-override-token-77\n"})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/InvalidCredentials", stalled: true, message: `Secret bad-`, secrets: []string{"bi-broken-override-token-77"},
		}),
		Entry("override Secret with the wrong key", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				c.override(map[string]string{"credentials": "[api]\ntoken = \"bi-wrong-key-token-3141\"\n"})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/InvalidCredentials", stalled: true, message: `has no key "config"`, secrets: []string{"bi-wrong-key-token-3141"},
		}),
		Entry("override Secret without an [api] table", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				c.override(map[string]string{"config": "[operator]\ntoken = \"bi-no-table-token-2718\"\n"})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/InvalidCredentials", stalled: true, secrets: []string{"bi-no-table-token-2718"},
		}),
		Entry("override Secret with credentials Clever Cloud rejects (401)", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				c.override(map[string]string{"config": "[api]\ntoken = \"" + rejected.Token + "\"\nsecret = \"" + rejected.Secret + "\"\nconsumer-key = \"" + rejected.ConsumerKey + "\"\nconsumer-secret = \"" + rejected.ConsumerSecret + "\"\n"})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/InvalidCredentials", stalled: true, message: "401 unknown consumer key or token", maxAPI: 6,
			secrets: kube.CredentialValues(rejected),
		}),
		Entry("override Secret naming another endpoint without a complete credential set", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				// A token and a consumer key without their secrets: a token + secret pair alone would
				// be complete (signed with clever-tools' published consumer pair).
				c.override(map[string]string{"config": "[api]\nendpoint = \"http://127.0.0.1:9\"\ntoken = \"bi-foreign-token-1618\"\nconsumer-key = \"bi-foreign-consumer-1414\"\n"})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/InvalidCredentials", stalled: true, secrets: []string{"bi-foreign-token-1618", "bi-foreign-consumer-1414"},
		}),
		Entry("revoked global credentials (401), while another credential set keeps working", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				setGlobalFaults(nil, []string{global.Token})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/InvalidCredentials", stalled: true, message: "401 token revoked", maxAPI: 6,
			canaryTenant: 1,
			cleanup: func(c *caseCtx, obj *unstructured.Unstructured) {
				setGlobalFaults(nil, nil)
				suite.Annotate(obj, map[string]string{"api.clever-cloud.com/reconcile-requested-at": "restored"})
				Eventually(suite.ReadyOf(obj)).Should(Equal("True/Provisioned"), "recovers once the credentials work again")
			},
		}),
		Entry("a foreign Secret in the way of the credentials Secret", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				Expect(k8s.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "redis-secrets", Namespace: c.ns},
					StringData: map[string]string{"mine": "bi-foreign-secret-value-5"}})).To(Succeed())
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/SecretConflict", stalled: true, message: "redis-secrets",
			secrets: []string{"bi-foreign-secret-value-5"},
		}),
		Entry("a foreign Secret in the way of the source Secret", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				Expect(k8s.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "redis-redis-source", Namespace: c.ns},
					StringData: map[string]string{"mine": "bi-foreign-source-value-6"}})).To(Succeed())
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/SecretConflict", stalled: true, message: "redis-redis-source",
			secrets: []string{"bi-foreign-source-value-6"},
		}),
		Entry("spec.addonId naming an add-on that does not exist", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				return set(c.sample("api_v1_redis.yaml"), "addon_ffffffff-0000-0000-0000-000000000000", "spec", "addonId")
			},
			ready: "False/AddonNotFound", stalled: true, message: "addon_ffffffff-0000-0000-0000-000000000000",
		}),
		Entry("the addon-id annotation naming an add-on that does not exist", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				u := c.sample("api_v1_cellar.yaml")
				u.SetAnnotations(map[string]string{"api.clever-cloud.com/addon-id": "addon_eeeeeeee-0000-0000-0000-000000000000"})
				return u
			},
			ready: "False/AddonNotFound", stalled: true, message: "addon_eeeeeeee-0000-0000-0000-000000000000",
		}),
		Entry("ObserveOnly with no add-on to observe", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				return set(c.sample("api_v1_mysql.yaml"), "ObserveOnly", "spec", "managementPolicy")
			},
			ready: "False/AddonNotFound", stalled: true, message: "managementPolicy ObserveOnly",
		}),
		Entry("add-on deleted out of band, policy report", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				u := c.sample("api_v1_redis.yaml")
				u.SetAnnotations(map[string]string{"api.clever-cloud.com/on-addon-missing": "report"})
				return u
			},
			act: func(c *caseCtx, obj *unstructured.Unstructured) {
				Expect(fake.DeleteAddonOutOfBand(c.org, waitReady(obj))).To(Succeed())
				suite.Annotate(obj, map[string]string{"api.clever-cloud.com/reconcile-requested-at": "gone"})
			},
			ready: "False/AddonMissing", stalled: true, message: "was deleted outside the operator",
		}),
		Entry("add-on deleted out of band, policy recreate (event AddonMissing, Ready again)", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured { return c.sample("api_v1_redis.yaml") },
			act: func(c *caseCtx, obj *unstructured.Unstructured) {
				old := waitReady(obj)
				Expect(fake.DeleteAddonOutOfBand(c.org, old)).To(Succeed())
				suite.Annotate(obj, map[string]string{"api.clever-cloud.com/reconcile-requested-at": "gone"})
				Eventually(func() string { return kube.StatusString(suite.Get(obj), "addon") }).ShouldNot(Equal(old))
			},
			ready: "True/Provisioned", event: "AddonMissing",
		}),
		Entry("Clever Cloud answering malformed JSON", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				setOwnerFault(c.org, fakeapi.OwnerFault{MalformedJSON: true})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/ApiError", message: "decoding response",
		}),
		Entry("provider missing from the catalogue (404 provider, 400 on create)", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				setGlobalFaults([]string{"addon-pulsar"}, nil)
				return c.sample("api_v1beta1_pulsar.yaml")
			},
			ready: "False/InvalidSpec", stalled: true, message: `400 unknown provider "addon-pulsar"`,
			cleanup: func(*caseCtx, *unstructured.Unstructured) { setGlobalFaults(nil, nil) },
		}),
		Entry("429 storm with Retry-After", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				c.useTenant(2)
				setOwnerFault(c.org, fakeapi.OwnerFault{Status: 429, RetryAfter: time.Second})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/ApiUnavailable", also: map[string]string{"Throttled": "True/Throttled"}, maxAPI: 6,
		}),
		Entry("500 storm", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				c.useTenant(3)
				setOwnerFault(c.org, fakeapi.OwnerFault{Status: 500})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/ApiUnavailable", message: "500", maxAPI: 10,
		}),
		Entry("Clever Cloud answering after the client's timeout", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				c.useTenant(4)
				setOwnerFault(c.org, fakeapi.OwnerFault{Latency: apiTimeout + 500*time.Millisecond})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/ApiUnavailable", message: "context deadline exceeded", maxAPI: 5,
		}),
		Entry("slow Clever Cloud within the timeout (control: Ready)", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				setOwnerFault(c.org, fakeapi.OwnerFault{Latency: 500 * time.Millisecond})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "True/Provisioned", event: "-", maxAPI: 0,
		}),
		Entry("env values too large for a Secret", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				setOwnerFault(c.org, fakeapi.OwnerFault{ExtraEnv: []fakeapi.Variable{{Name: "HUGE", Value: hugeValue}}})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "False/RenderFailed", stalled: true, message: "Too long", secrets: []string{hugeValue[:4096]},
		}),
		Entry("large env values that fit (control: Ready)", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				setOwnerFault(c.org, fakeapi.OwnerFault{ExtraEnv: []fakeapi.Variable{{Name: "BIG", Value: bigValue}, {Name: "UNICODE", Value: unicodeValue}}})
				return c.sample("api_v1_redis.yaml")
			},
			ready: "True/Provisioned", event: "-", secrets: []string{bigValue, unicodeValue},
		}),
		Entry("unicode in ConfigProvider variables (control: Ready, published as is)", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				return set(c.sample("api_v1_configprovider.yaml"), map[string]any{"GREETING": unicodeValue, "EMOJI_KEY_VALUE": "🔑-bi-config-secret-0001"}, "spec", "variables")
			},
			act: func(c *caseCtx, obj *unstructured.Unstructured) {
				Eventually(func() map[string][]byte {
					s := &corev1.Secret{}
					_ = k8s.Get(context.Background(), client.ObjectKey{Namespace: c.ns, Name: "config-provider-secrets"}, s)
					return s.Data
				}).Should(Equal(map[string][]byte{"GREETING": []byte(unicodeValue), "EMOJI_KEY_VALUE": []byte("🔑-bi-config-secret-0001")}))
			},
			ready: "True/Provisioned", event: "-", secrets: []string{unicodeValue, "🔑-bi-config-secret-0001"},
		}),
		Entry("ConfigProvider variable name that cannot be a Secret key", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				return set(c.sample("api_v1_configprovider.yaml"), map[string]any{"clé invalide": "bi-config-secret-0002"}, "spec", "variables")
			},
			ready: "False/RenderFailed", stalled: true, message: "clé invalide", secrets: []string{"bi-config-secret-0002"},
		}),
		Entry("deletion while the credentials cannot access the organisation", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured { return c.sample("api_v1_redis.yaml") },
			act: func(c *caseCtx, obj *unstructured.Unstructured) {
				waitReady(obj)
				setOwnerFault(c.org, fakeapi.OwnerFault{Status: 403})
				Expect(k8s.Delete(context.Background(), suite.Get(obj))).To(Succeed())
			},
			ready: "False/DeleteFailed", message: "skip-deprovision",
			cleanup: func(c *caseCtx, obj *unstructured.Unstructured) {
				suite.Annotate(obj, map[string]string{"api.clever-cloud.com/skip-deprovision": "true"})
				Eventually(func() *unstructured.Unstructured { return suite.Get(obj) }).Should(BeNil(), "released by the escape hatch")
				Eventually(suite.EventsOf(obj)).Should(ContainElement("Warning AddonLeftBehind"))
			},
		}),
		Entry("63-character name, the longest allowed (control: Ready)", engineCase{
			build: func(c *caseCtx) *unstructured.Unstructured {
				u := c.sample("api_v1_postgresql.yaml")
				u.SetName(strings.Repeat("n", 63))
				return u
			},
			ready: "True/Provisioned", event: "-",
		}),
	)

	It("does not block the deletion of a resource whose organisation id is malformed", func() {
		ctx := context.Background()
		c := newCase()
		obj := set(c.sample("api_v1_redis.yaml"), "not-an-org", "spec", "organisation")
		Expect(k8s.Create(ctx, obj)).To(Succeed())
		Eventually(suite.ReadyOf(obj)).Should(Equal("False/InvalidSpec"))
		api0 := fake.CountsByOwner()["not-an-org"]
		Expect(k8s.Delete(ctx, suite.Get(obj))).To(Succeed())
		Eventually(func() *unstructured.Unstructured { return suite.Get(obj) }).Should(BeNil(), "nothing can exist in a malformed organisation: no lookup, no DeleteFailed")
		Expect(fake.CountsByOwner()["not-an-org"]).To(Equal(api0), "no Clever Cloud call")
		Expect(suite.Events(obj)).NotTo(ContainElement("Warning DeleteFailed"))
	})
})
