package operator_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/kube"
)

var _ = Describe("rate budget", func() {
	ctx := context.Background()

	It("shows Throttled on 429 without flipping Ready, and clears it when Clever Cloud answers again", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr)).Should(Equal("True/Provisioned"))
		// Clever Cloud answers this organisation's requests with 429 and Retry-After: 1 s.
		suite.OwnerFault(ns, fakeapi.OwnerFault{Status: 429, RetryAfter: time.Second})
		suite.Annotate(cr, map[string]string{"api.clever-cloud.com/reconcile-requested-at": "throttle-1"})
		Eventually(func() string { return kube.Condition(suite.Get(cr), "Throttled") }, 60*time.Second).Should(Equal("True/Throttled"))
		Expect(suite.ReadyOf(cr)()).To(Equal("True/Provisioned"), "Ready does not flap on throttling")
		suite.ClearOwnerFault(ns)
		Eventually(func() string { return kube.Condition(suite.Get(cr), "Throttled") }, 60*time.Second).Should(Equal(""))
		Eventually(func() string { return kube.StatusString(suite.Get(cr), "lastHandledReconcileAt") }).Should(Equal("throttle-1"))
	})

	It("keeps the request rate under the client budget (10/s, burst 20) during a burst of creations", func() {
		ns := suite.NewNamespace()
		time.Sleep(3 * time.Second) // let the shared token bucket refill
		calls := suite.CountCalls(ns)
		start := time.Now()
		var crs []*unstructured.Unstructured
		// 18: each costs at least a create and an env read (a create made while others of its
		// kind are provisioned joins their wait without a read of its own: internal/addon/
		// waiting.go), so the burst is at least 36 calls, well over the bucket's 20.
		for i := 0; i < 18; i++ {
			cr := suite.Sample("api_v1_redis.yaml", ns)
			cr.SetName(fmt.Sprintf("burst-%d", i))
			Expect(k8s.Create(ctx, cr)).To(Succeed())
			crs = append(crs, cr)
		}
		for _, cr := range crs {
			Eventually(suite.ReadyOf(cr), 90*time.Second).Should(Equal("True/Provisioned"))
		}
		elapsed := time.Since(start).Seconds()
		// Only this spec's organisation is counted: other specs' resources may spend tokens of
		// the shared bucket too, which can only lower this count.
		n := calls.Matching("")
		Expect(n).To(BeNumerically(">=", 36), "18 × (create, env)")
		Expect(float64(n)).To(BeNumerically("<=", 20+10*elapsed+1), "calls %d in %.1fs", n, elapsed)
	})
})
