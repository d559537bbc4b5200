package operator_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// Issue #17, P7: resources waiting for their add-ons to be provisioned share what they learn
// (internal/waits): the oldest reads its env every few seconds, the others wait without a
// call until one is seen provisioned, and no waiting pass reads the add-on itself.
var _ = Describe("waiting for Clever Cloud to provision", func() {
	ctx := context.Background()

	It("reads only the env while waiting, the oldest often and the others about once more", func() {
		const n, delay = 6, 6 * time.Second
		ns := suite.NewNamespace()
		slow, srv := ownFake(fakeapi.Options{ProvisioningDelay: delay, Seed: 17})
		pointNamespaceAt(ns, srv.URL)
		var objs []*unstructured.Unstructured
		for i := range n {
			u := suite.Sample("api_v1_redis.yaml", ns)
			u.SetName(fmt.Sprintf("wait-%d", i))
			Expect(k8s.Create(ctx, u)).To(Succeed())
			objs = append(objs, u)
		}
		for _, u := range objs {
			Eventually(suite.ReadyOf(u), 60*time.Second).Should(Equal("True/Provisioned"))
		}
		calls := slow.CountsFor(suite.OrgOf(ns))
		Expect(calls["POST /v2/organisations/{ownerId}/addons"]).To(Equal(n))
		Expect(calls["GET /v2/organisations/{ownerId}/addons/{addonId}"]).To(BeZero(), "no waiting pass reads the add-on")
		// The first create is followed by a read (a create that comes once another waits is
		// not: at most one read after each create), the probe reads every 2 s (about 3 more),
		// and each other resource reads once when the probe saw its add-on provisioned. A
		// resource polling on its own every 2 s would read about 4 times (24), plus as many GETs.
		Expect(calls["GET /v2/organisations/{ownerId}/addons/{addonId}/env"]).To(And(BeNumerically(">=", n), BeNumerically("<=", 2*n+6)))
		for _, u := range objs {
			Expect(k8s.Delete(ctx, suite.Get(u))).To(Succeed())
		}
		for _, u := range objs {
			Eventually(func() *unstructured.Unstructured { return suite.Get(u) }, 30*time.Second).Should(BeNil())
		}
	})
})
