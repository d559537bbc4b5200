package addon

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clever-operator/clever-operator/api/shared"
	"github.com/clever-operator/clever-operator/internal/catalog"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/migrations"
	"github.com/clever-operator/clever-operator/internal/secrets"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/step"
)

// The engine's decisions, each tested where it is made: table cases, a fake API, no API
// server.

func TestClassify(t *testing.T) {
	throttled := &clevercloud.APIError{StatusCode: 429, RetryAfter: 3 * time.Second}
	cases := []struct {
		name string
		err  error
		want failureKind
	}{
		{"429 is throttling", throttled, failThrottled},
		{"403 cannot access the organisation", apiErr(403), failForbidden},
		{"401 rejected credentials", apiErr(401), failUnauthorized},
		{"503 is transient", apiErr(503), failUnavailable},
		{"500 is transient", apiErr(500), failUnavailable},
		{"timeout is transient", context.DeadlineExceeded, failUnavailable},
		{"undecidable error is an API error", errors.New("boom"), failAPIError},
		{"400 is an API error", apiErr(400), failAPIError},
		{"409 is an API error", apiErr(409), failAPIError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := classify(c.err); got != c.want {
				t.Fatalf("classify = %d, want %d", got, c.want)
			}
		})
	}
}

// TestFailAPIStatus: what each API failure does to the status of a Ready and of a
// not-yet-Ready resource, and how the pass is retried.
func TestFailAPIStatus(t *testing.T) {
	throttled := &clevercloud.APIError{StatusCode: 429, RetryAfter: 3 * time.Second}
	cases := []struct {
		name       string
		wasReady   bool
		err        error
		addonReady string // status/reason of AddonReady after the pass
		extra      string // another condition set (type/status/reason), "" for none
		backoff    bool   // the error goes to the work queue's backoff
		event      bool
	}{
		{"unavailable on a Ready resource: Synced=False, Ready kept", true, apiErr(503), "True/" + status.ReasonProvisioned, status.TypeSynced + "/False/" + status.ReasonAPIUnavailable, true, true},
		{"unavailable while provisioning", false, apiErr(503), "False/" + status.ReasonAPIUnavailable, "", true, true},
		{"throttled on a Ready resource: Ready kept, wait as told", true, throttled, "True/" + status.ReasonProvisioned, status.TypeThrottled + "/True/" + status.TypeThrottled, false, false},
		{"throttled while provisioning", false, throttled, "False/" + status.ReasonAPIUnavailable, status.TypeThrottled + "/True/" + status.TypeThrottled, false, true},
		{"forbidden", true, apiErr(403), "False/" + status.ReasonInvalidCredentials, "", true, true},
		{"unauthorised", false, apiErr(401), "False/" + status.ReasonInvalidCredentials, "", true, true},
		{"other API error", false, apiErr(400), "False/" + status.ReasonAPIError, "", true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, u := testResource(t, func(u *unstructured.Unstructured) {
				if c.wasReady {
					setCondition(u, status.TypeAddonReady, metav1.ConditionTrue, status.ReasonProvisioned, "ok", time.Now())
				}
			})
			r := &Reconciler{Kind: kind(t, "Azimutt"), ResyncPeriod: time.Hour}
			s := r.newPass(context.Background(), u)
			res, err := end(s.failAPI("doing it", c.err))
			if (err != nil) != c.backoff {
				t.Fatalf("err %v, want backoff %v", err, c.backoff)
			}
			if !c.backoff && res.RequeueAfter < 3*time.Second {
				t.Fatalf("throttling must wait the delay the API gave: %+v", res)
			}
			if got := condition(s.conds, status.TypeAddonReady); got != c.addonReady {
				t.Fatalf("AddonReady %s, want %s", got, c.addonReady)
			}
			if c.extra != "" {
				parts := strings.Split(c.extra, "/")
				got, _ := status.Find(s.conds, parts[0])
				if got.Status != parts[1] || got.Reason != parts[2] {
					t.Fatalf("%s = %s/%s", parts[0], got.Status, got.Reason)
				}
			}
			if (len(s.events) > 0) != c.event {
				t.Fatalf("events %v, want one: %v", s.events, c.event)
			}
			for _, e := range s.events {
				if strings.Contains(e.msg, "Not Found") {
					t.Fatal("unexpected message")
				}
			}
		})
	}
}

func TestFailEventsOnlyOnChange(t *testing.T) {
	_, u := testResource(t, nil)
	r := &Reconciler{Kind: kind(t, "Azimutt"), ResyncPeriod: time.Hour}
	s := r.newPass(context.Background(), u)
	_ = s.fail(status.ReasonInvalidSpec, "bad", nil)
	_ = s.fail(status.ReasonInvalidSpec, "bad", nil)
	if len(s.events) != 1 {
		t.Fatalf("events %v: one per change, not per retry", s.events)
	}
	res, err := end(s.fail(status.ReasonInvalidSpec, "bad", nil))
	if err != nil || res.RequeueAfter < time.Hour {
		t.Fatalf("a terminal failure waits for the resync: %+v %v", res, err)
	}
}

func TestDrift(t *testing.T) {
	r := &Reconciler{Kind: kind(t, "PostgreSql")}
	withStatus := func(plan, version, region string) *unstructured.Unstructured {
		u := obj(map[string]any{"instance": map[string]any{"region": region, "plan": "s"}})
		if plan != "" {
			kinds.Change(u, func(st *kinds.Status) { st.Plan = plan })
		}
		if version != "" {
			kinds.Change(u, func(st *kinds.Status) { st.Version = version })
		}
		return u
	}
	a := &clevercloud.Addon{ID: "addon_1", Region: "par", Plan: clevercloud.Plan{ID: "plan_s", Slug: "s"}}
	addonCases := []struct {
		name   string
		u      *unstructured.Unstructured
		reason string
	}{
		{"as applied", withStatus("plan_s", "", "par"), ""},
		{"no plan recorded yet", withStatus("", "", "par"), ""},
		{"plan changed outside", withStatus("plan_m", "", "par"), status.ReasonPlanDrift},
		{"region changed outside", withStatus("plan_s", "", "rbx"), status.ReasonRegionDrift},
		{"region case only", withStatus("plan_s", "", "PAR"), ""},
	}
	for _, c := range addonCases {
		t.Run("addon/"+c.name, func(t *testing.T) {
			st := kinds.StatusOf(c.u)
			d := r.addonDrift(c.u, &st, a)
			if got := driftReason(d); got != c.reason {
				t.Fatalf("drift %q, want %q", got, c.reason)
			}
		})
	}
	versionCases := []struct {
		name     string
		recorded string
		env      map[string]string
		reason   string
	}{
		{"nothing recorded", "", map[string]string{"POSTGRESQL_ADDON_VERSION": "16"}, ""},
		{"same", "17", map[string]string{"POSTGRESQL_ADDON_VERSION": "17"}, ""},
		{"leading parts", "8", map[string]string{"ES_ADDON_VERSION": "8.19.9"}, ""},
		{"env shows no version", "17", map[string]string{}, ""},
		{"changed outside", "17", map[string]string{"POSTGRESQL_ADDON_VERSION": "16"}, status.ReasonVersionDrift},
	}
	for _, c := range versionCases {
		t.Run("version/"+c.name, func(t *testing.T) {
			st := kinds.StatusOf(withStatus("", c.recorded, "par"))
			if got := driftReason(versionDrift(&st, c.env)); got != c.reason {
				t.Fatalf("drift %q, want %q", got, c.reason)
			}
		})
	}
}

func driftReason(d *drift) string {
	if d == nil {
		return ""
	}
	return d.reason
}

func TestReportDrift(t *testing.T) {
	_, u := testResource(t, nil)
	r := &Reconciler{Kind: kind(t, "Azimutt")}
	s := r.newPass(context.Background(), u)
	s.reportDrift(nil)
	if len(s.condChanges) != 0 {
		t.Fatal("no drift and none recorded: no change")
	}
	s.reportDrift(&drift{status.ReasonPlanDrift, "changed"})
	s.reportDrift(&drift{status.ReasonPlanDrift, "changed"})
	if len(s.events) != 1 {
		t.Fatalf("one event per drift seen, got %v", s.events)
	}
	s.reportDrift(nil)
	if _, ok := status.Find(s.conds, status.TypeDrifted); ok {
		t.Fatal("Drifted not cleared")
	}
}

// TestFindAddon: the binding rules (which add-on a resource uses, when it may bind one it did
// not create, and when it may create).
func TestFindAddon(t *testing.T) {
	k := kind(t, "Azimutt")
	key := []byte("0123456789abcdef0123456789abcdef")
	named := "kubernetes::Azimutt::uid-1"
	other := "kubernetes::Azimutt::uid-2"
	claim := func(addonID, ns, name string) string { return secrets.ClaimValue(key, addonID, ns, "Azimutt", name) }
	one := func(id string, name *string) map[string]clevercloud.Addon {
		return map[string]clevercloud.Addon{id: {ID: id, Name: name}}
	}
	cases := []struct {
		name     string
		status   string // status.addon
		adopted  bool   // status.adopted
		bind     string // spec.addonId
		claim    string // the addon-claim annotation
		grantAny bool   // the credentials allow binding any add-on
		first    bool
		addons   map[string]clevercloud.Addon
		getErr   error
		found    string // id used ("" none)
		wantAdpt bool
		err      int    // expected HTTP status of the error (0 none)
		reason   string // expected refusal (Ready reason)
		calls    string
	}{
		{name: "bound id allowed by the credentials: read, adopted", bind: "addon_b", grantAny: true, addons: one("addon_b", nil), found: "addon_b", wantAdpt: true, calls: "get addon_b"},
		{name: "bound id without the privilege: refused", bind: "addon_b", addons: one("addon_b", nil), reason: status.ReasonBindingNotAllowed, calls: "get addon_b"},
		{name: "bound id named after this resource: its own", bind: "addon_n", addons: one("addon_n", &named), found: "addon_n", calls: "get addon_n"},
		{name: "bound id claimed by a sibling of the namespace: adopted", bind: "addon_s", claim: claim("addon_s", "ns", "sibling"), addons: one("addon_s", nil), found: "addon_s", wantAdpt: true, calls: "get addon_s"},
		{name: "bound id with a claim copied from another namespace: refused", bind: "addon_s", claim: claim("addon_s", "team-a", "az"), addons: one("addon_s", nil), reason: status.ReasonBindingNotAllowed, calls: "get addon_s"},
		{name: "bound id 404: an error, never a creation", bind: "addon_b", grantAny: true, err: 404, calls: "get addon_b"},
		{name: "recorded id", status: "addon_1", addons: one("addon_1", nil), found: "addon_1", calls: "get addon_1"},
		{name: "recorded adopted id: checked again, refused without the privilege", status: "addon_1", adopted: true, addons: one("addon_1", nil), reason: status.ReasonBindingNotAllowed, calls: "get addon_1"},
		{name: "recorded adopted id, still allowed", status: "addon_1", adopted: true, grantAny: true, addons: one("addon_1", nil), found: "addon_1", wantAdpt: true, calls: "get addon_1"},
		{name: "recorded id 404 but listed: used", status: "addon_1", addons: map[string]clevercloud.Addon{"x": {ID: "addon_1"}}, getErr: apiErr(404), found: "addon_1", calls: "get addon_1,list"},
		{name: "recorded id 404, bound: an error", status: "addon_1", bind: "addon_1", getErr: apiErr(404), err: 404, calls: "get addon_1"},
		{name: "recorded id 503: an error", status: "addon_1", getErr: apiErr(503), err: 503, calls: "get addon_1"},
		{name: "restored: its own claim finds its add-on, even on a first pass", first: true, claim: claim("addon_c", "ns", "az"), addons: one("addon_c", nil), found: "addon_c", calls: "get addon_c"},
		{name: "restored: a claim of another namespace is refused, no call", first: true, claim: claim("addon_c", "team-a", "az"), addons: one("addon_c", nil), reason: status.ReasonBindingNotAllowed},
		{name: "restored: a forged claim is refused, no call", first: true, claim: "v1/addon_c/Azimutt/az/AAAA", addons: one("addon_c", nil), reason: status.ReasonBindingNotAllowed},
		{name: "a claim that no longer verifies (key lost) on a resource that created its add-on: found by name", claim: "v1/addon_n/Azimutt/az/AAAA", addons: one("addon_n", &named), found: "addon_n", calls: "list"},
		{name: "a claim that does not verify, nothing named after the resource: refused, never created", claim: "v1/addon_c/Azimutt/az/AAAA", addons: one("addon_c", nil), reason: status.ReasonBindingNotAllowed, calls: "list"},
		{name: "restored: the claimed add-on is gone: reported, never recreated", claim: claim("addon_c", "ns", "az"), getErr: apiErr(404), reason: status.ReasonAddonNotFound, calls: "get addon_c"},
		{name: "found by name: its own, not adopted", addons: one("addon_n", &named), found: "addon_n", calls: "list"},
		{name: "another resource's add-on is not taken", addons: one("addon_o", &other), calls: "list"},
		{name: "first pass: no list", first: true, addons: one("addon_n", &named)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, u := testResource(t, func(u *unstructured.Unstructured) {
				if c.status != "" {
					kinds.Change(u, func(st *kinds.Status) { st.Addon = c.status })
				}
				if c.adopted {
					kinds.Change(u, func(st *kinds.Status) { st.Adopted = true })
				}
				if c.bind != "" {
					kinds.SpecAddonID.Set(u, c.bind)
				}
				if c.claim != "" {
					u.SetAnnotations(map[string]string{kinds.AnnotationAddonClaim: c.claim})
				}
			})
			api := &fakeAPI{addons: c.addons, getErr: c.getErr}
			r := newHarness(t, k, api, u).r
			r.ClaimKey = key
			s := r.newPass(context.Background(), u)
			s.api, s.first = api, c.first
			s.grant = &credentials.Grant{Source: "test credentials", BindAny: c.grantAny}
			a, adopted, err := r.findAddon(context.Background(), s)
			var ae *clevercloud.APIError
			var sp *step.Stop
			switch {
			case c.reason != "":
				cond, _ := status.Find(s.conds, status.TypeAddonReady)
				if !errors.As(err, &sp) || cond.Reason != c.reason {
					t.Fatalf("err %v, Ready reason %q, want a refusal %s", err, cond.Reason, c.reason)
				}
			case c.err != 0 && (!errors.As(err, &ae) || ae.StatusCode != c.err):
				t.Fatalf("err %v, want HTTP %d", err, c.err)
			case c.err == 0 && err != nil:
				t.Fatal(err)
			}
			got := ""
			if a != nil {
				got = a.ID
			}
			if got != c.found || adopted != c.wantAdpt {
				t.Fatalf("found %q adopted %v, want %q %v", got, adopted, c.found, c.wantAdpt)
			}
			if calls := strings.Join(api.calls, ","); calls != c.calls {
				t.Fatalf("calls %q, want %q", calls, c.calls)
			}
		})
	}
}

func TestMayCreate(t *testing.T) {
	cases := []struct {
		name      string
		mutate    func(*unstructured.Unstructured)
		onMissing string
		reason    string // AddonReady reason ("" may create)
	}{
		{"new resource", nil, "", ""},
		{"ObserveOnly never creates", func(u *unstructured.Unstructured) { kinds.SpecManagementPolicy.Set(u, "ObserveOnly") }, "", status.ReasonAddonNotFound},
		{"deleted out of band, report policy", func(u *unstructured.Unstructured) { kinds.Change(u, func(st *kinds.Status) { st.Addon = "addon_1" }) }, kinds.OnMissingReport, status.ReasonAddonMissing},
		{"deleted out of band, recreate policy", func(u *unstructured.Unstructured) { kinds.Change(u, func(st *kinds.Status) { st.Addon = "addon_1" }) }, kinds.OnMissingRecreate, ""},
		{"deleted out of band, annotation says recreate", func(u *unstructured.Unstructured) {
			kinds.Change(u, func(st *kinds.Status) { st.Addon = "addon_1" })
			u.SetAnnotations(map[string]string{kinds.AnnotationOnAddonMissing: kinds.OnMissingRecreate})
		}, kinds.OnMissingReport, ""},
		{"paused", func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{kinds.AnnotationPaused: "true"})
		}, "", status.ReasonPauseRequested},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, u := testResource(t, c.mutate)
			r := &Reconciler{Kind: kind(t, "Azimutt"), OnAddonMissing: c.onMissing, ResyncPeriod: time.Hour}
			s := r.newPass(context.Background(), u)
			err := r.mayCreate(s)
			if (err == nil) != (c.reason == "") {
				t.Fatalf("err %v, want reason %q", err, c.reason)
			}
			if c.reason != "" {
				if a, _ := status.Find(s.conds, status.TypeAddonReady); a.Reason != c.reason {
					t.Fatalf("AddonReady reason %q, want %q", a.Reason, c.reason)
				}
				if res, err := end(err); err != nil || res == (ctrl.Result{}) {
					t.Fatalf("a refusal waits for the user: %+v %v", res, err)
				}
			}
		})
	}
}

func TestPending(t *testing.T) {
	cellar := kind(t, "Cellar")
	cases := []struct {
		name    string
		keys    []string
		data    map[string]string
		revoked map[string]string
		pending string // substring of the message ("" publishable)
	}{
		{"every key published", []string{"A", "B"}, map[string]string{"A": "1", "B": "2"}, nil, ""},
		{"no keys announced", nil, map[string]string{"A": "1"}, nil, ""},
		{"one key missing", []string{"A", "B"}, map[string]string{"A": "1"}, nil, "1 of 2 variables"},
		{"env still shows the revoked key", nil, map[string]string{"CELLAR_ADDON_KEY_ID": "old", "CELLAR_ADDON_KEY_SECRET": "olds"}, map[string]string{"CELLAR_ADDON_KEY_ID": "old", "CELLAR_ADDON_KEY_SECRET": "olds"}, "revoked key"},
		{"renewed key", nil, map[string]string{"CELLAR_ADDON_KEY_ID": "new", "CELLAR_ADDON_KEY_SECRET": "news"}, map[string]string{"CELLAR_ADDON_KEY_ID": "old", "CELLAR_ADDON_KEY_SECRET": "olds"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := obj(nil)
			if c.revoked != nil {
				kinds.Change(u, func(st *kinds.Status) { st.EnsureCreds().RevokedKeyHash = revokedKeyHash(cellar, c.revoked) })
			}
			got := pendingMessage(cellar, new(kinds.StatusOf(u)), "addon_1", c.keys, c.data)
			if (got == "") != (c.pending == "") || !strings.Contains(got, c.pending) {
				t.Fatalf("pending %q, want %q", got, c.pending)
			}
		})
	}
}

// TestStopPass: the one place a pass's outcome is translated.
func TestStopPass(t *testing.T) {
	cause := apiErr(503)
	cases := []struct {
		name string
		err  error
		res  ctrl.Result
		want error
	}{
		{"went through", nil, ctrl.Result{}, nil},
		{"stopped with a requeue", stop(ctrl.Result{RequeueAfter: time.Minute}), ctrl.Result{RequeueAfter: time.Minute}, nil},
		{"stopped for backoff", stopRetry(cause), ctrl.Result{}, cause},
		{"plain error", cause, ctrl.Result{}, cause},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := end(c.err)
			if res != c.res || err != c.want {
				t.Fatalf("end = %+v, %v; want %+v, %v", res, err, c.res, c.want)
			}
		})
	}
}

func TestMigrationRecordRoundTrip(t *testing.T) {
	u := obj(nil)
	if kinds.StatusOf(u).Migration != nil {
		t.Fatal("no record")
	}
	want := migrations.State{ID: "migration_1", Status: clevercloud.MigrationRunning, Step: "COPY", Target: "plan p, region par, version 17", Generation: 3}
	kinds.Change(u, func(st *kinds.Status) { st.Migration = &want })
	raw, _, _ := unstructured.NestedMap(u.Object, "status", "migration")
	if _, has := raw["message"]; has {
		t.Fatalf("empty fields are left out: %v", raw)
	}
	if got := kinds.StatusOf(u).Migration; got == nil || *got != want {
		t.Fatalf("read back %+v", got)
	}
}

// TestPublished: the status of a resource whose credentials were just published.
func TestPublished(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	data := map[string]string{"CELLAR_ADDON_HOST": "cellar.example", "CELLAR_ADDON_KEY_ID": "id"}
	hash := secrets.Hash(data)
	cases := []struct {
		name        string
		before      func(*kinds.Status)
		p           kinds.Publication
		requested   string
		rolledOut   string // status.credentials.rolledOutHash after
		binding     string
		changedAt   bool // lastChangedAt set by this publication
		handledAt   string
		configMap   string
		secretName  string
		revokedGone bool
	}{
		{"first publication is the rollout baseline", nil, kinds.Publication{SecretName: "c-secrets"}, "", hash, "", true, "", "", "c-secrets", true},
		{"new credentials: a rollout is due", func(st *kinds.Status) {
			st.Credentials = &shared.CredentialsStatus{Hash: "old", RolledOutHash: "old", RevokedKeyHash: "revoked"}
		}, kinds.Publication{SecretName: "c-secrets", BindingName: "c-secrets-binding", ConfigMapName: "c-config"}, "r1", "old", "c-secrets-binding", true, "r1", "c-config", "c-secrets", true},
		{"same credentials: nothing moves", func(st *kinds.Status) {
			st.Credentials = &shared.CredentialsStatus{Hash: hash, RolledOutHash: hash}
			st.Binding = &shared.BindingStatus{Name: "gone"}
		}, kinds.Publication{Disabled: true}, "", hash, "", false, "", "", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var st kinds.Status
			if c.before != nil {
				c.before(&st)
			}
			published(kind(t, "Cellar"), c.p, data, nil, 4, c.requested, now)(&st)
			cr := st.Creds()
			if cr.RolledOutHash != c.rolledOut {
				t.Errorf("rolledOutHash %q, want %q", cr.RolledOutHash, c.rolledOut)
			}
			if cr.Hash != hash || st.ObservedGeneration != 4 {
				t.Errorf("hash %q observedGeneration %d", cr.Hash, st.ObservedGeneration)
			}
			if (cr.LastChangedAt != nil) != c.changedAt {
				t.Errorf("lastChangedAt %v", cr.LastChangedAt)
			}
			binding := ""
			if st.Binding != nil {
				binding = st.Binding.Name
			}
			if binding != c.binding || st.ConfigMapName != c.configMap || st.SecretName != c.secretName {
				t.Errorf("binding %q configMap %q secret %q", binding, st.ConfigMapName, st.SecretName)
			}
			if st.LastHandledReconcileAt != c.handledAt {
				t.Errorf("lastHandledReconcileAt %q", st.LastHandledReconcileAt)
			}
			if c.revokedGone && cr.RevokedKeyHash != "" {
				t.Error("revokedKeyHash kept after a publication")
			}
			if st.URL != "cellar.example" {
				t.Errorf("url %q", st.URL)
			}
		})
	}
}

// TestCreate: plan resolution and the create call, and how each failure is reported.
func TestCreate(t *testing.T) {
	catalogue := []clevercloud.Provider{{ID: "azimutt", Plans: []clevercloud.Plan{{ID: "plan_free", Slug: "free", Name: "Free"}}}}
	cases := []struct {
		name   string
		plan   string // spec.instance.plan
		region string
		api    *fakeAPI
		reason string // AddonReady reason ("" created)
		calls  string
	}{
		{"plan slug resolved, add-on created", "free", "par", &fakeAPI{providers: catalogue}, "", "catalogue,create"},
		{"plan id used as is", "plan_free", "par", &fakeAPI{}, "", "create"},
		{"no region", "free", "", &fakeAPI{providers: catalogue}, status.ReasonInvalidSpec, ""},
		{"unknown plan (catalogue read again before saying so)", "huge", "par", &fakeAPI{providers: catalogue}, status.ReasonPlanNotFound, "catalogue,catalogue"},
		{"catalogue unavailable", "free", "par", &fakeAPI{catErr: apiErr(503)}, status.ReasonAPIUnavailable, "catalogue"},
		{"create refused (400)", "free", "par", &fakeAPI{providers: catalogue, createErr: apiErr(400)}, status.ReasonInvalidSpec, "catalogue,create"},
		{"create unanswered (503)", "free", "par", &fakeAPI{providers: catalogue, createErr: apiErr(503)}, status.ReasonAPIUnavailable, "catalogue,create"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, u := testResource(t, func(u *unstructured.Unstructured) {
				kinds.SpecPlan.Set(u, c.plan)
				kinds.SpecRegion.SetOrRemove(u, c.region)
			})
			r := &Reconciler{Kind: kind(t, "Azimutt"), Plans: &catalog.PlanCache{}, ResyncPeriod: time.Hour}
			s := r.newPass(context.Background(), u)
			s.api, s.key = c.api, "k"
			a, _, err := r.create(context.Background(), s)
			if calls := strings.Join(c.api.calls, ","); calls != c.calls {
				t.Fatalf("calls %q, want %q", calls, c.calls)
			}
			if c.reason == "" {
				if err != nil || a == nil || a.Plan.ID != "plan_free" {
					t.Fatalf("not created: %v %+v", err, a)
				}
				if len(s.events) != 1 || s.events[0].reason != status.EventAddonCreated {
					t.Fatalf("events %v", s.events)
				}
				return
			}
			if err == nil || a != nil {
				t.Fatalf("created anyway: %+v", a)
			}
			if got, _ := status.Find(s.conds, status.TypeAddonReady); got.Reason != c.reason {
				t.Fatalf("AddonReady reason %q (%s), want %q", got.Reason, got.Message, c.reason)
			}
		})
	}
}
