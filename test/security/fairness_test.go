package security_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/test/kube"
)

// Fairness between tenants (issue #43): a namespace's own credentials may name any endpoint.
// One that never answers must not hold the workers every namespace shares (4 per kind here),
// and the namespace must not get its circuit breaker closed again by minting a new token.

// stuckEndpoint accepts every request and never answers (until the spec ends); it counts the
// requests by the token they carry.
type stuckEndpoint struct {
	*httptest.Server
	mu      sync.Mutex
	byToken map[string]int
	// Unstick lets the requests in wait go (and the next ones through).
	Unstick func()
}

func newStuckEndpoint() *stuckEndpoint {
	e := &stuckEndpoint{byToken: map[string]int{}}
	done := make(chan struct{})
	e.Unstick = sync.OnceFunc(func() { close(done) })
	e.Server = httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) {
		e.mu.Lock()
		e.byToken[strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")]++
		e.mu.Unlock()
		select {
		case <-done:
		case <-req.Context().Done():
		}
	}))
	DeferCleanup(func() { e.Unstick(); e.Close() })
	return e
}

func (e *stuckEndpoint) hits() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, v := range e.byToken {
		n += v
	}
	return n
}

func (e *stuckEndpoint) hitsWith(token string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.byToken[token]
}

// createAllReady creates n Redis resources in ns (through c) and returns how long until all
// of them are Ready.
func createAllReady(c client.Client, ns, prefix, org string, n int, within time.Duration) time.Duration {
	GinkgoHelper()
	start := time.Now()
	objs := make([]*unstructured.Unstructured, 0, n)
	for i := range n {
		u := sample("api_v1_redis.yaml", ns, fmt.Sprintf("%s-%d", prefix, i), org)
		Expect(c.Create(context.Background(), u)).To(Succeed())
		objs = append(objs, u)
	}
	Eventually(func() []string {
		var notReady []string
		for _, u := range objs {
			if got := kube.Condition(suite.Get(u), "Ready"); got != "True/"+status.ReasonProvisioned {
				notReady = append(notReady, u.GetName()+": "+got)
			}
		}
		return notReady
	}).WithTimeout(within).WithPolling(200 * time.Millisecond).Should(BeEmpty())
	return time.Since(start)
}

var _ = Describe("fairness between tenants: team-b's credentials name an endpoint that never answers", func() {
	ctx := context.Background()

	It("keeps team-a's creates as fast as its share of workers allows, reports team-b's endpoint as not answering, and keeps team-b's circuit open across a new token", func() {
		w := newWorld()

		// Team-a alone: the usual time of 20 creates in this suite (4 workers).
		alone := createAllReady(k8s, w.teamA, "alone", w.orgA, 20, 2*time.Minute)
		GinkgoWriter.Printf("team-a's 20 Redis Ready alone in %s\n", alone.Round(time.Millisecond))

		// Team-b, as a namespace editor: an identity of its own (a bearer token) at an endpoint
		// of its own that accepts connections and never answers, and 8 resources on it.
		stuck := newStuckEndpoint()
		tb := tenantClient(w.teamB)
		override := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: credentials.OverrideSecretNames[0], Namespace: w.teamB},
			StringData: map[string]string{"config": fmt.Sprintf("[api]\nendpoint = %q\ntoken = \"tk-stuck-1\"\n", stuck.URL)}}
		Expect(tb.Create(ctx, override)).To(Succeed())
		var teamB []*unstructured.Unstructured
		for i := range 8 {
			u := sample("api_v1_redis.yaml", w.teamB, fmt.Sprintf("stuck-%d", i), w.orgB)
			Expect(tb.Create(ctx, u)).To(Succeed())
			teamB = append(teamB, u)
		}
		DeferCleanup(func() {
			// Released without calling the endpoint (it never recorded an add-on).
			for _, u := range teamB {
				cur := suite.Get(u)
				if cur == nil {
					continue
				}
				ann := cur.GetAnnotations()
				if ann == nil {
					ann = map[string]string{}
				}
				ann[kinds.AnnotationSkipDeprovision] = "true"
				cur.SetAnnotations(ann)
				_ = k8s.Update(ctx, cur)
			}
			deleteAll(teamB...)
		})
		// Team-b's passes are holding workers at its endpoint (two passes of one credential set
		// share one catalogue read: one request or two).
		Eventually(stuck.hits).WithTimeout(30 * time.Second).Should(BeNumerically(">=", 1))
		time.Sleep(time.Second)
		held := stuck.hits()
		GinkgoWriter.Printf("team-b's endpoint holds %d requests\n", held)
		Expect(held).To(BeNumerically("<=", 2), "team-b's passes hold at most half of the 4 workers (each attempt of each call waits the suite's 8 s API timeout)")

		// Team-a's 20 next creates: on the workers team-b does not hold. Without the share,
		// team-b's 8 passes would hold all 4 workers (8 s per attempt in this suite, 30 s by
		// default, cut by the 60 s pass deadline) and team-a would wait for them.
		bound := min(max(3*alone, alone+20*time.Second), 50*time.Second)
		shared := createAllReady(k8s, w.teamA, "with-b", w.orgA, 20, bound)
		GinkgoWriter.Printf("team-a's 20 Redis Ready while team-b's endpoint is stuck in %s (alone: %s, bound %s)\n",
			shared.Round(time.Millisecond), alone.Round(time.Millisecond), bound)

		// Team-b's resources say their endpoint does not answer: a pass cut by its deadline
		// ("did not answer in time"), or the circuit its unanswered attempts opened (8 of
		// them: two passes of two 8 s attempts at a time in this suite).
		notAnswering := regexp.MustCompile(`did not answer in time|not answering`)
		Eventually(func() []string {
			var pending []string
			for _, u := range teamB {
				cur := suite.Get(u)
				if got, msg := kube.Condition(cur, "Ready"), kube.ConditionMessage(cur, "Ready"); got != "False/"+status.ReasonAPIUnavailable || !notAnswering.MatchString(msg) {
					pending = append(pending, u.GetName()+": "+got+": "+msg)
				}
			}
			return pending
		}).WithTimeout(4 * time.Minute).WithPolling(time.Second).Should(BeEmpty())
		for _, u := range teamB[:2] {
			GinkgoWriter.Printf("%s/%s: %s\n", w.teamB, u.GetName(), kube.ConditionMessage(suite.Get(u), "Ready"))
		}
		Expect(suite.Warnings(w.teamB, teamB[0].GetName())).To(ContainElement(ContainSubstring(status.ReasonAPIUnavailable)))

		// The circuit is open (every team-b pass is refused without a request). A new token in
		// team-b's Secret is the same source at the same host: still open, no new request.
		Eventually(func() bool {
			for _, u := range teamB {
				if strings.Contains(kube.ConditionMessage(suite.Get(u), "Ready"), "circuit open") {
					return true
				}
			}
			return false
		}).WithTimeout(time.Minute).Should(BeTrue(), "team-b's circuit opens")
		before := stuck.hits()
		cur := &corev1.Secret{}
		Expect(tb.Get(ctx, client.ObjectKeyFromObject(override), cur)).To(Succeed())
		cur.StringData = map[string]string{"config": fmt.Sprintf("[api]\nendpoint = %q\ntoken = \"tk-stuck-2\"\n", stuck.URL)}
		Expect(tb.Update(ctx, cur)).To(Succeed())
		Consistently(stuck.hits, 8*time.Second, 200*time.Millisecond).Should(Equal(before),
			"re-minting the token does not reopen team-b's endpoint to a burst of requests")
		Expect(stuck.hitsWith("tk-stuck-2")).To(BeZero())
		GinkgoWriter.Printf("team-b's endpoint got %d requests in all (%d with the new token)\n", stuck.hits(), stuck.hitsWith("tk-stuck-2"))
	})
})

var _ = Describe("fairness between tenants: the NetworkGroup controller's two workers", func() {
	ctx := context.Background()

	It("keeps team-b's groups on its endpoint that never answers to one worker, so team-a's groups are Ready meanwhile", func() {
		w := newWorld()
		stuck := newStuckEndpoint()
		tb := tenantClient(w.teamB)
		override := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: credentials.OverrideSecretNames[0], Namespace: w.teamB},
			StringData: map[string]string{"config": fmt.Sprintf("[api]\nendpoint = %q\ntoken = \"tk-stuck-ng\"\n", stuck.URL)}}
		Expect(tb.Create(ctx, override)).To(Succeed())
		var teamB []*unstructured.Unstructured
		for i := range 3 {
			u := sample("api_v1alpha1_networkgroup.yaml", w.teamB, fmt.Sprintf("stuck-%d", i), w.orgB)
			Expect(tb.Create(ctx, u)).To(Succeed())
			teamB = append(teamB, u)
		}
		DeferCleanup(func() {
			stuck.Unstick()           // the pass at the endpoint ends now, not at its deadline
			for _, u := range teamB { // released without calling the endpoint
				Eventually(func() error {
					cur := suite.Get(u)
					if cur == nil {
						return nil
					}
					ann := cur.GetAnnotations()
					if ann == nil {
						ann = map[string]string{}
					}
					ann[kinds.AnnotationSkipDeprovision] = "true"
					cur.SetAnnotations(ann)
					return k8s.Update(ctx, cur)
				}).Should(Succeed())
			}
			deleteAll(teamB...)
		})

		// Each attempt waits 8 s (the suite's API timeout): within that, team-b's passes hold
		// one of the two workers (its share), not both.
		Eventually(stuck.hits).WithTimeout(30 * time.Second).Should(BeNumerically(">=", 1))
		Consistently(stuck.hits, 5*time.Second, 200*time.Millisecond).Should(Equal(1), "one team-b pass at its endpoint at a time")

		// Team-a's groups (the operator's credentials) run on the other worker. Without the
		// share, team-b's passes would hold both for up to a minute each (the pass deadline).
		start := time.Now()
		var teamA []*unstructured.Unstructured
		for i := range 3 {
			teamA = append(teamA, create(sample("api_v1alpha1_networkgroup.yaml", w.teamA, fmt.Sprintf("mine-%d", i), w.orgA)))
		}
		for _, u := range teamA {
			Eventually(suite.ReadyOf(u)).WithTimeout(20 * time.Second).Should(Equal("True/Available"))
		}
		GinkgoWriter.Printf("team-a's 3 NetworkGroups Ready in %s while team-b's endpoint is stuck\n", time.Since(start).Round(time.Millisecond))
		deleteAll(teamA...)
	})
})
