package plugin

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

// The operator's real log lines (controller-runtime's zap, JSON as deployed and console as the
// test suites run it), written by the real client with the engine's logger shape: the calls of
// one resource are found, not those of another resource or kind.
func TestParseCallsFromOperatorLogs(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && n.Add(1) == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		_, _ = w.Write([]byte(`{"id":"addon_1"}`))
	}))
	defer srv.Close()
	api, err := clevercloud.New(clevercloud.Config{Endpoint: srv.URL, RateLimit: -1, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond,
		Credentials: clevercloud.Credentials{BearerToken: "bearer-token-for-trace-test"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dev  bool
	}{{"json (production)", false}, {"console (development)", true}} {
		t.Run(tc.name, func(t *testing.T) {
			n.Store(0)
			var buf bytes.Buffer
			log := crzap.New(crzap.WriteTo(&buf), crzap.UseDevMode(tc.dev), crzap.Level(zapcore.Level(-1))).WithName("addon")
			ctx := func(kind, name string) context.Context {
				return logr.NewContext(context.Background(), log.WithValues(kind, types.NamespacedName{Namespace: "team-a", Name: name}))
			}
			if _, err := api.GetAddon(ctx("postgresql", "db"), "orga_1", "addon_1"); err != nil {
				t.Fatal(err)
			}
			if err := api.DeleteAddon(ctx("postgresql", "other"), "orga_1", "addon_2"); err != nil {
				t.Fatal(err)
			}
			if err := api.DeleteAddon(ctx("redis", "db"), "orga_1", "addon_3"); err != nil {
				t.Fatal(err)
			}
			calls, err := ParseCalls(&buf, "postgresql", "team-a", "db")
			if err != nil {
				t.Fatal(err)
			}
			if len(calls) != 2 {
				t.Fatalf("calls = %+v\nlogs:\n%s", calls, buf.String())
			}
			for i, want := range []Call{
				{Method: "GET", Route: clevercloud.RouteAddon, Status: 502, Attempt: 1},
				{Method: "GET", Route: clevercloud.RouteAddon, Status: 200, Attempt: 2},
			} {
				got := calls[i]
				if got.Method != want.Method || got.Route != want.Route || got.Status != want.Status || got.Attempt != want.Attempt {
					t.Errorf("call %d = %+v, want %+v", i, got, want)
				}
				if got.Time.IsZero() || time.Since(got.Time) > time.Minute {
					t.Errorf("call %d time %v not read", i, got.Time)
				}
			}
		})
	}
}

func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		ok         bool
		want       Call
	}{
		{"json, epoch time", `{"level":"info","ts":1764083000.5,"logger":"addon","msg":"Clever Cloud call","redis":{"name":"db","namespace":"ns"},"method":"POST","route":"/v2/organisations/{ownerId}/addons","status":200,"durationMs":12,"attempt":1}`,
			true, Call{Time: time.Unix(1764083000, 5e8).UTC(), Method: "POST", Route: "/v2/organisations/{ownerId}/addons", Status: 200, DurationMs: 12, Attempt: 1}},
		{"json, ISO time, no answer", `{"level":"info","ts":"2026-11-25T15:00:00.000Z","msg":"Clever Cloud call","redis":{"name":"db","namespace":"ns"},"method":"GET","route":"/v2/self","status":0,"durationMs":3,"attempt":2,"failure":"sending request"}`,
			true, Call{Time: time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC), Method: "GET", Route: "/v2/self", DurationMs: 3, Attempt: 2, Failure: "sending request"}},
		{"console", "2026-11-25T15:00:00.000Z\tINFO\taddon\tClever Cloud call\t{\"redis\": {\"name\":\"db\",\"namespace\":\"ns\"}, \"method\": \"DELETE\", \"route\": \"/v2/organisations/{ownerId}/addons/{addonId}\", \"status\": 204, \"durationMs\": 7, \"attempt\": 1}",
			true, Call{Time: time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC), Method: "DELETE", Route: "/v2/organisations/{ownerId}/addons/{addonId}", Status: 204, DurationMs: 7, Attempt: 1}},
		{"resource as namespace/name", `{"ts":1,"msg":"Clever Cloud call","redis":"ns/db","method":"GET","route":"/v2/self","status":200,"durationMs":1,"attempt":1}`,
			true, Call{Time: time.Unix(1, 0).UTC(), Method: "GET", Route: "/v2/self", Status: 200, DurationMs: 1, Attempt: 1}},
		{"another namespace", `{"ts":1,"msg":"Clever Cloud call","redis":{"name":"db","namespace":"other"},"method":"GET","route":"/v2/self","status":200}`, false, Call{}},
		{"another kind", `{"ts":1,"msg":"Clever Cloud call","postgresql":{"name":"db","namespace":"ns"},"method":"GET","route":"/v2/self","status":200}`, false, Call{}},
		{"another message", `{"ts":1,"msg":"will retry","redis":{"name":"db","namespace":"ns"},"note":"Clever Cloud call"}`, false, Call{}},
		{"not JSON", `Clever Cloud call garbage {`, false, Call{}},
		{"empty", ``, false, Call{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseLine(tc.line, "redis", "ns", "db")
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if ok && got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestPrintTraceCalls(t *testing.T) {
	k := kindByName("Redis")
	u := k8sObject(k.GVK.Kind, "ns", "db")
	var b strings.Builder
	printTrace(&b, k, u, nil, []Call{{Time: time.Unix(0, 0), Method: "GET", Route: "/v2/self", Attempt: 1, Failure: "sending request"}}, time.Now())
	for _, want := range []string{"Conditions:", "Events:", "Clever Cloud calls", "/v2/self", "- (sending request)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}

func TestPodCalls(t *testing.T) {
	pod := func(name string, labels map[string]string, containers ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "clever-operator-system", Labels: labels}}
		for _, c := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
		}
		return p
	}
	sel := "app.kubernetes.io/name=clever-operator"
	for _, tc := range []struct {
		name string
		objs []runtime.Object
		err  string
		logs int // pods/log reads
	}{
		{"no operator pod", []runtime.Object{pod("other", map[string]string{"app": "x"}, "c")}, "no operator pod labelled " + sel + " in namespace clever-operator-system", 0},
		{"the operator's pods, manager container", []runtime.Object{
			pod("op-1", map[string]string{"app.kubernetes.io/name": "clever-operator"}, "kube-rbac-proxy", "manager"),
			pod("op-2", map[string]string{"app.kubernetes.io/name": "clever-operator"}, "manager"),
			pod("other", map[string]string{"app": "x"}, "c")}, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := k8sfake.NewClientset(tc.objs...)
			calls, err := podCalls(context.Background(), cs, "clever-operator-system", sel, "redis", "ns", "db")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(calls) != 0 {
				t.Errorf("calls from the fake clientset's canned log: %+v", calls)
			}
			var reads []string
			for _, a := range cs.Actions() {
				if a.GetSubresource() == "log" {
					reads = append(reads, a.(k8stesting.GenericAction).GetValue().(*corev1.PodLogOptions).Container)
				}
			}
			if len(reads) != tc.logs || reads[0] != "manager" {
				t.Errorf("pods/log reads = %v, want %d of container manager", reads, tc.logs)
			}
		})
	}
}
