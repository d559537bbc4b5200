package addon

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	apiv1 "github.com/clever-operator/clever-operator/api/v1"
	"github.com/clever-operator/clever-operator/internal/catalog"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/operatoraddons"
	"github.com/clever-operator/clever-operator/internal/status"
)

// deleteAPI is the Clever Cloud side of a deletion: what DELETE, the organisation's list and
// /v2/self answer.
type deleteAPI struct {
	credentials.API
	deleteErr error
	list      []clevercloud.Addon
	listErr   error
	selfErr   error
	getErr    error
	getName   string
	deletes   int
}

func (a *deleteAPI) DeleteAddon(context.Context, string, string) error {
	a.deletes++
	return a.deleteErr
}

// GetAddon answers getErr, else the add-on named getName (Clever Cloud's name, "" for none).
func (a *deleteAPI) GetAddon(_ context.Context, _, id string) (*clevercloud.Addon, error) {
	if a.getErr != nil {
		return nil, a.getErr
	}
	var name *string
	if a.getName != "" {
		name = &a.getName
	}
	return &clevercloud.Addon{ID: id, Name: name}, nil
}

func (a *deleteAPI) ListAddons(context.Context, string) ([]clevercloud.Addon, error) {
	return a.list, a.listErr
}

func (a *deleteAPI) Self(context.Context) (*clevercloud.Self, error) {
	if a.selfErr != nil {
		return nil, a.selfErr
	}
	return &clevercloud.Self{ID: "user_1"}, nil
}

type staticCredentials struct{ api credentials.API }

func (s staticCredentials) Resolve(context.Context, *unstructured.Unstructured) (*credentials.Grant, error) {
	return &credentials.Grant{API: s.api, Key: "k", Source: "test credentials", BindAny: true}, nil
}

// TestFinalizeA404IsNotProof drives finalize (no API server: a fake Kubernetes client and a
// fake Clever Cloud API) through the answers a deletion can get.
func TestFinalizeA404IsNotProof(t *testing.T) {
	const org = "orga_00000000-0000-0000-0000-000000000001"
	cases := []struct {
		name     string
		addonID  string // status.addon ("" = never recorded: looked up by name)
		api      *deleteAPI
		released bool
		reason   string // AddonReady reason when kept
	}{
		{"DELETE answers 2xx", "addon_1", &deleteAPI{}, true, ""},
		{"404 confirmed by the organisation's list", "addon_1", &deleteAPI{deleteErr: apiErr(404), list: []clevercloud.Addon{{ID: "addon_2"}}}, true, ""},
		{"404 but the list still has it", "addon_1", &deleteAPI{deleteErr: apiErr(404), list: []clevercloud.Addon{{ID: "addon_1"}}}, false, status.ReasonDeletionUnconfirmed},
		{"everything 404s (wrong base path)", "addon_1", &deleteAPI{deleteErr: apiErr(404), listErr: apiErr(404), selfErr: apiErr(404)}, false, status.ReasonDeletionUnconfirmed},
		{"organisation unknown to a reachable API", "addon_1", &deleteAPI{deleteErr: apiErr(404), listErr: apiErr(404)}, true, ""},
		{"404 and the list fails", "addon_1", &deleteAPI{deleteErr: apiErr(404), listErr: apiErr(503)}, false, status.ReasonDeletionUnconfirmed},
		{"still provisioning (409)", "addon_1", &deleteAPI{deleteErr: apiErr(409)}, false, status.ReasonDeletionDeferred},
		{"never recorded, list 404s, self 404s", "", &deleteAPI{listErr: apiErr(404), selfErr: apiErr(404)}, false, status.ReasonDeletionUnconfirmed},
		{"never recorded, list answers without it", "", &deleteAPI{list: []clevercloud.Addon{}}, true, ""},
		{"still named after this resource", "addon_1", &deleteAPI{getName: "kubernetes::Metabase::uid-1"}, true, ""},
		{"taken over by a restored resource elsewhere: kept", "addon_1", &deleteAPI{getName: "kubernetes::Metabase::uid-2"}, true, ""},
		{"the read before deleting answers 404: DELETE decides", "addon_1", &deleteAPI{getErr: apiErr(404), deleteErr: apiErr(404), list: []clevercloud.Addon{{ID: "addon_1"}}}, false, status.ReasonDeletionUnconfirmed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := kind(t, "Metabase")
			scheme := runtime.NewScheme()
			if err := apiv1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			if err := corev1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(k.GVK)
			u.SetNamespace("ns")
			u.SetName("mb")
			u.SetUID("uid-1")
			u.SetFinalizers([]string{k.Finalizer()})
			now := metav1.NewTime(time.Now().Add(-10 * time.Second))
			u.SetDeletionTimestamp(&now)
			_ = unstructured.SetNestedField(u.Object, map[string]any{"organisation": org, "instance": map[string]any{"region": "par", "plan": "base"}}, "spec")
			if c.addonID != "" {
				_ = unstructured.SetNestedField(u.Object, c.addonID, "status", "addon")
			}
			cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(u).WithStatusSubresource(&apiv1.Metabase{}).Build()
			rec := record.NewFakeRecorder(10)
			r := &Reconciler{Kind: k, Client: cl, APIReader: cl, Recorder: rec, Credentials: staticCredentials{c.api}, Plans: &catalog.PlanCache{}}

			res, err := r.reconcileObject(context.Background(), u)
			if err != nil {
				t.Fatalf("finalize: %v (a refused or unconfirmed deletion is not an error loop)", err)
			}
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(k.GVK)
			gerr := cl.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "mb"}, live)
			if c.released {
				if gerr == nil && len(live.GetFinalizers()) > 0 {
					t.Fatalf("not released: finalizers %v", live.GetFinalizers())
				}
				if kept := strings.Contains(c.api.getName, "uid-2"); c.addonID != "" && kept != (c.api.deletes == 0) {
					t.Fatalf("%d DELETE calls; the add-on taken over elsewhere is never deleted, any other is", c.api.deletes)
				}
				return
			}
			if gerr != nil || len(live.GetFinalizers()) == 0 {
				t.Fatalf("released on an unconfirmed answer (err %v)", gerr)
			}
			if res.RequeueAfter <= 0 {
				t.Fatalf("no retry scheduled: %+v", res)
			}
			a, _ := status.Find(status.Conditions(live), status.TypeAddonReady)
			if a.Reason != c.reason {
				t.Fatalf("AddonReady reason %q (%s), want %s", a.Reason, a.Message, c.reason)
			}
			select {
			case ev := <-rec.Events:
				if !strings.HasPrefix(ev, "Warning "+c.reason) {
					t.Fatalf("event %q", ev)
				}
			default:
				t.Fatal("no Warning event")
			}
			// Asked again with the same answer: the same condition, no second event.
			if _, err := r.reconcileObject(context.Background(), live); err != nil {
				t.Fatal(err)
			}
			select {
			case ev := <-rec.Events:
				t.Fatalf("repeated event %q", ev)
			default:
			}
		})
	}
}

// operatorAPI is an operator add-on at v4.
type operatorAPI struct {
	credentials.API
	info     clevercloud.OperatorInfo
	check    *clevercloud.OperatorVersionCheck
	updates  []string
	reboots  int
	rebuilds int
}

func (a *operatorAPI) GetOperator(context.Context, string, string) (*clevercloud.OperatorInfo, error) {
	i := a.info
	return &i, nil
}

func (a *operatorAPI) CheckOperatorVersion(context.Context, string, string) (*clevercloud.OperatorVersionCheck, error) {
	if a.check == nil {
		return nil, apiErr(404)
	}
	return a.check, nil
}

func (a *operatorAPI) UpdateOperatorVersion(_ context.Context, _, _, target string) (*clevercloud.OperatorInfo, error) {
	a.updates = append(a.updates, target)
	i := a.info
	i.Version = target
	return &i, nil
}

func (a *operatorAPI) RebootOperator(context.Context, string, string) error { a.reboots++; return nil }
func (a *operatorAPI) RebuildOperator(context.Context, string, string) error {
	a.rebuilds++
	return nil
}

func TestOperatorActions(t *testing.T) {
	offered := &clevercloud.OperatorVersionCheck{Installed: "26.1.4", Available: []string{"26.1.4", "26.2.5"}, Latest: "26.2.5", NeedUpdate: true}
	cases := []struct {
		name        string
		kind        string
		version     string
		annotations map[string]string
		check       *clevercloud.OperatorVersionCheck
		updates     string
		reboots     int
		rebuilds    int
		condition   string
	}{
		{"no spec.version: nothing", "Keycloak", "", nil, offered, "", 0, 0, ""},
		{"runs the version asked for", "Keycloak", "26.1.4", nil, offered, "", 0, 0, "False/" + status.ReasonVersionUpToDate},
		{"offered: one update", "Keycloak", "26.2.5", nil, offered, "26.2.5", 0, 0, "True/" + status.ReasonVersionUpdated},
		{"not offered: named, nothing called", "Keycloak", "99.0.0", nil, offered, "", 0, 0, "False/" + status.ReasonVersionNotAvailable},
		{"Matomo has no version update", "Matomo", "5.4.0", nil, nil, "", 0, 0, "False/" + status.ReasonVersionNotAvailable},
		{"reboot and rebuild once per value", "Otoroshi", "", map[string]string{operatoraddons.AnnotationRebootRequestedAt: "r1", operatoraddons.AnnotationRebuildRequestedAt: "b1"}, offered, "", 1, 1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := kind(t, c.kind)
			scheme := runtime.NewScheme()
			_ = apiv1.AddToScheme(scheme)
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(k.GVK)
			u.SetNamespace("ns")
			u.SetName("x")
			u.SetGeneration(3)
			u.SetAnnotations(c.annotations)
			_ = unstructured.SetNestedField(u.Object, map[string]any{"organisation": "orga_1"}, "spec")
			if c.version != "" {
				_ = unstructured.SetNestedField(u.Object, c.version, "spec", "version")
			}
			typed := map[string]client.Object{"Keycloak": &apiv1.Keycloak{}, "Matomo": &apiv1.Matomo{}, "Otoroshi": &apiv1.Otoroshi{}}[c.kind]
			cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(u).WithStatusSubresource(typed).Build()
			api := &operatorAPI{info: clevercloud.OperatorInfo{Version: "26.1.4", AvailableVersions: []string{"26.1.4", "26.2.5"}}, check: c.check}
			if c.kind == "Matomo" {
				api.info = clevercloud.OperatorInfo{Version: "5.3.2"}
			}
			r := &Reconciler{Kind: k, Client: cl, APIReader: cl, Recorder: record.NewFakeRecorder(10)}
			live := func() *unstructured.Unstructured {
				l := &unstructured.Unstructured{}
				l.SetGroupVersionKind(k.GVK)
				if err := cl.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "x"}, l); err != nil {
					t.Fatal(err)
				}
				return l
			}
			addon := &clevercloud.Addon{ID: "addon_1", RealID: "x_1"}
			for range 2 { // a second pass with nothing new calls nothing again
				s := r.newPass(context.Background(), live())
				s.api = api
				if err := operatoraddons.Act(context.Background(), s, addon); err != nil {
					t.Fatalf("stopped the pass: %v", err)
				}
				if err := r.commit(context.Background(), s); err != nil {
					t.Fatal(err)
				}
				r.flushEvents(s)
			}
			if got := strings.Join(api.updates, ","); got != c.updates {
				t.Errorf("updates %q, want %q", got, c.updates)
			}
			if api.reboots != c.reboots || api.rebuilds != c.rebuilds {
				t.Errorf("reboots %d rebuilds %d, want %d %d", api.reboots, api.rebuilds, c.reboots, c.rebuilds)
			}
			got := ""
			if cond, ok := status.Find(status.Conditions(live()), status.TypeVersionUpdate); ok {
				got = cond.Status + "/" + cond.Reason
				if c.condition == "False/"+status.ReasonVersionNotAvailable && !strings.Contains(cond.Message, "26.2.5") && c.kind == "Keycloak" {
					t.Errorf("the message does not name the offered versions: %s", cond.Message)
				}
			}
			if got != c.condition {
				t.Errorf("VersionUpdate %q, want %q", got, c.condition)
			}
			if c.reboots > 0 {
				if v, _, _ := unstructured.NestedString(live().Object, "status", "lastHandledRebootAt"); v != "r1" {
					t.Errorf("lastHandledRebootAt %q", v)
				}
			}
		})
	}
}
