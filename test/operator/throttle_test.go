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

var _ = Describe("rate budget", func() {
	ctx := context.Background()

	It("shows Throttled on 429 without flipping Ready, and clears it when Clever Cloud answers again", func() {
		ns := newNamespace()
		cr := sample("api_v1_redis.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(readyOf(cr)).Should(Equal("True/Provisioned"))
		fake.SetFaults(fakeapi.Faults{RateLimitBurst: 1, RateLimitWindow: time.Hour, RetryAfter: time.Second})
		defer fake.SetFaults(fakeapi.Faults{})
		// The fake lets one request through per window: spend it, so the refresh gets 429.
		_, _ = newClient().ListProviders(ctx)
		annotate(cr, map[string]string{"api.clever-cloud.com/reconcile-requested-at": "throttle-1"})
		Eventually(func() string { return condition(get(cr), "Throttled") }, 60*time.Second).Should(Equal("True/Throttled"))
		Expect(readyOf(cr)()).To(Equal("True/Provisioned"), "Ready does not flap on throttling")
		fake.SetFaults(fakeapi.Faults{})
		Eventually(func() string { return condition(get(cr), "Throttled") }, 60*time.Second).Should(Equal(""))
		Eventually(func() string { return statusString(get(cr), "lastHandledReconcileAt") }).Should(Equal("throttle-1"))
	})

	It("keeps the request rate under the client budget (10/s, burst 20) during a burst of creations", func() {
		ns := newNamespace()
		time.Sleep(3 * time.Second) // let the shared token bucket refill
		fake.ResetCounts()
		start := time.Now()
		var crs []*unstructured.Unstructured
		for i := 0; i < 12; i++ {
			cr := sample("api_v1_redis.yaml", ns)
			cr.SetName(fmt.Sprintf("burst-%d", i))
			Expect(k8s.Create(ctx, cr)).To(Succeed())
			crs = append(crs, cr)
		}
		for _, cr := range crs {
			Eventually(readyOf(cr), 90*time.Second).Should(Equal("True/Provisioned"))
		}
		elapsed := time.Since(start).Seconds()
		calls := apiCalls("")
		Expect(calls).To(BeNumerically(">=", 36), "12 × (lookup, create, env)")
		Expect(float64(calls)).To(BeNumerically("<=", 20+10*elapsed+1), "calls %d in %.1fs", calls, elapsed)
	})
})
