package fakeapi

import (
	"cmp"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/catalog"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/faults"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/migration"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/networkgroups"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/oauth"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/operatoraddon"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// Credential is one accepted OAuth1 credential set. A Credential with an
// empty ConsumerKey and ConsumerSecret is the "token + secret only" set Clever
// Cloud's docs describe: requests are then signed with clever-tools' published
// consumer pair (CleverToolsConsumerKey, CleverToolsConsumerSecret).
type Credential struct {
	ConsumerKey    string
	ConsumerSecret string
	Token          string
	Secret         string // token secret
}

// Options configure a Server. The zero value is a server that rejects every
// API request (no credentials) with no faults.
type Options struct {
	// Credentials are the accepted OAuth1 credential sets. HMAC-SHA512 (and
	// HMAC-SHA1) signatures are verified; PLAINTEXT
	// ("<consumer_secret>&<token_secret>") is accepted too.
	Credentials []Credential
	// BearerTokens are the accepted "Authorization: Bearer <token>" values.
	// As on the real API they are only accepted by the bridge host
	// (BridgeHandler, NewTestServers); the API host answers 401 to any
	// bearer token unless BearerOnAPIHost is set.
	BearerTokens []string
	// BearerOnAPIHost restores the fake's old behaviour of accepting bearer
	// tokens on the API host too (the real API host does not).
	BearerOnAPIHost bool
	// LegacyOperatorEnv restores the v2 env (GET …/addons/{addonId}/env and
	// configKeys) of the operator add-ons (Keycloak, Metabase, Matomo,
	// Otoroshi). By default, like the real API of today, their v2 env is
	// empty and their data is served by GET /v4/addon-providers/addon-<name>/addons/{realId}.
	LegacyOperatorEnv bool
	// DeleteDuringProvisioning restores the fake's old behaviour of
	// accepting the DELETE of an add-on during ProvisioningDelay (the real
	// platform refuses it), for tests that want the env delay only.
	DeleteDuringProvisioning bool
	// CreateDelay makes POST /v2/organisations/{ownerId}/addons wait that
	// long before answering. The add-on exists (and is listed) from the
	// start of the wait, so a client that times out and retries must find it
	// by name rather than create a second one.
	CreateDelay time.Duration
	// Organisations are the organisation ids GET /v2/organisations lists
	// (after the user's personal entry), besides every owner that has ever
	// had an add-on. See also AddOrganisation.
	Organisations []string
	// Identities are who some credential sets authenticate as, by token (an OAuth1 token
	// or a bearer token): GET /v2/self and GET /v2/organisations answer for that identity.
	// A token not listed is the server's one user (Self).
	Identities map[string]Identity
	// SkipAuth disables authentication entirely.
	SkipAuth bool
	// MaxClockSkew bounds |now - oauth_timestamp| (default 5m).
	MaxClockSkew time.Duration
	// ProvisioningDelay: the env of a new add-on reads as [] until this
	// delay has passed (Addon.configKeys always lists every key), and
	// DELETE of the add-on is refused with 409 during that time, as the
	// platform refuses to delete an add-on right after its creation.
	ProvisioningDelay time.Duration
	// Seed makes ids, credentials and fault draws deterministic when non-zero
	// (for a given sequence of requests).
	Seed int64
	// Faults are the initial injected faults (see SetFaults).
	Faults Faults
	// MigrationDuration is how long a migration stays RUNNING before it
	// ends OK (default DefaultMigrationDuration, 3s; negative: it ends at
	// the first read after it started). Its steps share it equally.
	MigrationDuration time.Duration
	// Now is the clock (default time.Now). It drives creation dates, the
	// provisioning delay, migration progress, OAuth timestamps, outages and
	// the rate limiter.
	Now func() time.Time
	// Logger, when set, gets one line per request (method, route, status,
	// duration). Secrets, env values and headers are never logged.
	Logger *slog.Logger
}

// Route keys that are not API routes.
const (
	// RouteUnmatched counts API requests that matched no route.
	RouteUnmatched = "UNMATCHED"
)

// ErrNotFound is returned by the state-changing helpers for an unknown add-on.
var ErrNotFound = errors.New("fakeapi: add-on not found")

// Server is the in-memory fake of the Clever Cloud API. It is an
// http.Handler and is safe for concurrent use.
type Server struct {
	opts    Options
	now     func() time.Time
	logger  *slog.Logger
	catalog *catalog.Catalog
	api     *http.ServeMux
	admin   *http.ServeMux

	mu       sync.Mutex // guards everything below, and rng
	rng      *rand.Rand
	byID     map[string]*addonRecord
	byRealID map[string]*addonRecord
	seq      uint64
	self     Self
	// migrating holds the add-ons with a RUNNING migration (settled lazily).
	migrating   map[*addonRecord]bool
	failNext    int // FailNextMigrations count
	failNextMsg string

	faults *faults.Injector // injected faults (its own lock)
	// oauthCreds are Options.Credentials as the OAuth1 check takes them.
	oauthCreds []oauth.Credential

	countMu     sync.Mutex
	counts      map[string]int
	byStatus    map[string]map[int]int
	byOwner     map[string]int
	ownerCounts map[string]map[string]int // owner -> route -> n
	tokenCounts map[string]map[string]int // token -> route -> n (authenticated requests)

	// guarded by mu
	privatePlans map[string]map[string][]*Plan // owner -> providerId -> plans
	orgs         map[string]bool               // AddOrganisation
	priceFactors map[string]float64            // SetOrgPriceFactor
	// backupOverrides are the backups tests set (SetBackups, backups.go).
	backupOverrides map[*addonRecord]*backupState
	// Network Groups (networkgroups.go)
	ngs      *networkgroups.Store
	verMu    sync.Mutex
	versions map[string]catalog.VersionSpec // providerId -> versions (SetProviderVersions); guarded by verMu
}

// addonRecord is the stored state of one add-on. Future per-add-on state
// (tags...) belongs here.
type addonRecord struct {
	owner      string
	options    map[string]any       // the create request's "options", as sent
	private    bool                 // created with an org-private plan
	op         *operatoraddon.State // v4 data of an operator add-on (nil otherwise)
	seq        uint64
	kind       *catalog.Kind
	addon      Addon // Provider without plans
	env        []Variable
	readyAt    time.Time           // env reads as [] before this instant
	version    string              // options.version or the provider default ("" if none)
	migrations []*migration.Record // oldest first
}

// New returns a Server seeded with every provider of the operator.
func New(opts Options) *Server {
	if opts.MaxClockSkew <= 0 {
		opts.MaxClockSkew = 5 * time.Minute
	}
	opts.Credentials = slices.Clone(opts.Credentials)
	for i, c := range opts.Credentials {
		if c.ConsumerKey == "" && c.ConsumerSecret == "" {
			opts.Credentials[i].ConsumerKey = CleverToolsConsumerKey
			opts.Credentials[i].ConsumerSecret = CleverToolsConsumerSecret
		}
	}
	opts.BearerTokens = slices.Clone(opts.BearerTokens)
	opts.Organisations = slices.Clone(opts.Organisations)
	s := &Server{
		opts:     opts,
		now:      opts.Now,
		logger:   opts.Logger,
		catalog:  catalog.New(),
		api:      http.NewServeMux(),
		admin:    http.NewServeMux(),
		byID:     map[string]*addonRecord{},
		byRealID: map[string]*addonRecord{},
		counts:   map[string]int{},
		byStatus: map[string]map[int]int{},

		ownerCounts:  map[string]map[string]int{},
		privatePlans: map[string]map[string][]*Plan{},
		orgs:         map[string]bool{},
		versions:     catalog.Versions(),

		migrating:   map[*addonRecord]bool{},
		failNextMsg: migration.DefaultFailureMessage,
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.rng = rand.New(rand.NewChaCha8(seedBytes(opts.Seed, 1)))
	s.faults = faults.NewInjector(opts.Faults, rand.New(rand.NewChaCha8(seedBytes(opts.Seed, 2))))
	for _, c := range opts.Credentials {
		s.oauthCreds = append(s.oauthCreds, oauth.Credential{ConsumerKey: c.ConsumerKey, ConsumerSecret: c.ConsumerSecret, Token: c.Token, TokenSecret: c.Secret})
	}
	s.self = s.newSelf()
	s.ngs = s.newNetworkGroups()
	s.routes()
	s.adminRoutes()
	return s
}

// NewTestServer starts New(opts) on an httptest.Server: the API host (OAuth1
// only, unless Options.BearerOnAPIHost). The caller closes it.
func NewTestServer(opts Options) (*Server, *httptest.Server) {
	s := New(opts)
	return s, httptest.NewServer(s)
}

// NewTestServers starts New(opts) on two httptest.Servers sharing one state:
// api is the API host (OAuth1), bridge the API bridge host (bearer tokens
// only), as api.clever-cloud.com and api-bridge.clever-cloud.com. The caller
// closes both.
func NewTestServers(opts Options) (s *Server, api, bridge *httptest.Server) {
	s = New(opts)
	return s, httptest.NewServer(s), httptest.NewServer(s.BridgeHandler())
}

func seedBytes(seed int64, stream byte) [32]byte {
	var b [32]byte
	if seed == 0 {
		if _, err := crand.Read(b[:]); err != nil {
			panic(err)
		}
		return b
	}
	binary.LittleEndian.PutUint64(b[:8], uint64(seed))
	copy(b[8:], "clever-operator-fakeapi")
	b[31] = stream
	return b
}

// newUUID returns a random (v4) UUID string from the server's generator.
// Caller holds s.mu (or is New).
func (s *Server) newUUID() string { return catalog.RandUUID(s.rng) }

// randString returns n characters of alphabet from the server's generator.
// Caller holds s.mu.
func (s *Server) randString(alphabet string, n int) string {
	return catalog.RandString(s.rng, alphabet, n)
}

// generateEnv builds the environment of a new (or just migrated) add-on of
// kind k; version "" is the provider's default. Caller holds s.mu.
func (s *Server) generateEnv(k *catalog.Kind, ownerID, realID string, plan *Plan, region, version string) []Variable {
	if version == "" {
		version = s.defaultVersionOf(k)
	}
	return catalog.GenerateEnv(k, s.rng, ownerID, realID, plan, region, version)
}

func (s *Server) newSelf() Self {
	return Self{
		ID:             "user_" + s.newUUID(),
		Name:           "Fake User",
		Email:          "fake-user@example.com",
		Phone:          "+33 1 23 45 67 89",
		Address:        "1 rue de la Paix",
		City:           "Nantes",
		Zipcode:        "44000",
		Country:        "FRANCE",
		Avatar:         "https://assets.clever-cloud.com/avatars/fake-user.png",
		CreationDate:   uint64(s.now().UnixMilli()),
		Lang:           "EN",
		EmailValidated: true,
		OauthApps:      []string{},
		Admin:          false,
		CanPay:         true,
		PreferredMFA:   "NONE",
		HasPassword:    true,
	}
}

// ServeHTTP serves the API and, under /admin/, the test-only admin endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/admin" || strings.HasPrefix(r.URL.Path, "/admin/") {
		s.serveAdmin(w, r)
		return
	}
	s.api.ServeHTTP(w, r)
}

// ---- plumbing ----

// statusRecorder records the status as soon as it is written, so counters are
// up to date before the client sees the response.
type statusRecorder struct {
	http.ResponseWriter
	status   int
	onStatus func(int)
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		if w.onStatus != nil {
			w.onStatus(code)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// handle registers an API route; pattern is also its route key.
func (s *Server) handle(pattern string, h http.HandlerFunc) {
	s.api.Handle(pattern, s.apiHandler(pattern, true, h))
}

// apiHandler wraps an API handler with counting, logging, faults and auth.
func (s *Server) apiHandler(route string, guarded bool, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.countRequest(route)
		rec := &statusRecorder{ResponseWriter: w, onStatus: func(code int) { s.countStatus(route, code) }}
		authErr := ""
		defer func() {
			if rec.status == 0 {
				rec.WriteHeader(http.StatusOK)
			}
			attrs := []any{"method", r.Method, "route", route, "status", rec.status, "duration", time.Since(start).Round(time.Microsecond)}
			if authErr != "" {
				attrs = append(attrs, "authError", authErr)
			}
			s.logger.Info("fakeapi request", attrs...)
		}()
		var out http.ResponseWriter = rec
		if guarded {
			s.countOwner(s.requestOwner(r), route)
			if s.faults.PreAuth(rec, r, s.now()) {
				return
			}
			if authErr = s.authenticate(r); authErr == "" && s.revokedToken(r) {
				authErr = faults.MsgRevokedToken
			}
			if authErr != "" {
				wire.WriteError(rec, http.StatusUnauthorized, wire.ErrIDUnauthorized, authErr)
				return
			}
			r = s.withToken(r, route)
			var answered bool
			if out, answered = s.faults.ApplyOwner(rec, r, route); answered {
				return
			}
			if s.faults.InjectError(rec, route) {
				return
			}
		}
		h(out, r)
		faults.Finish(out)
	})
}

// ---- API routes ----

func (s *Server) routes() {
	s.handle("GET /v2/self", s.getSelf)
	s.handle("GET /v2/organisations", s.getOrganisations)
	s.handle("GET /v2/products/addonproviders", s.listProviders)
	s.handle("GET /v2/products/addonproviders/{providerId}", s.getProvider)
	s.handle("GET /v2/organisations/{ownerId}/addons", s.listAddons)
	s.handle("POST /v2/organisations/{ownerId}/addons", s.createAddon)
	s.handle("GET /v2/organisations/{ownerId}/addons/{addonId}", s.getAddon)
	s.handle("PUT /v2/organisations/{ownerId}/addons/{addonId}", s.renameAddon)
	s.handle("DELETE /v2/organisations/{ownerId}/addons/{addonId}", s.deleteAddon)
	s.handle("GET /v2/organisations/{ownerId}/addons/{addonId}/env", s.getAddonEnv)
	s.handle("GET /v4/addon-providers/config-provider/addons/{realId}/env", s.getConfigEnv)
	s.handle("PUT /v4/addon-providers/config-provider/addons/{realId}/env", s.putConfigEnv)
	s.handle("POST /v2/organisations/{ownerId}/addons/{addonId}/migrations", s.startMigration)
	s.handle("GET /v2/organisations/{ownerId}/addons/{addonId}/migrations", s.listMigrations)
	s.handle("GET /v2/organisations/{ownerId}/addons/{addonId}/migrations/{migrationId}", s.getMigration)
	s.handle("DELETE /v2/organisations/{ownerId}/addons/{addonId}/migrations/{migrationId}", s.abortMigration)
	s.handle("GET /v4/addon-providers/{providerId}", s.getProviderInfo)
	s.handle("POST /v4/cellar/organisations/{ownerId}/cellar/{realId}/credentials/renew", s.renewCellar)
	s.handle("GET /v4/billing/price-system", s.getListPriceSystem)
	s.handle("GET /v4/billing/organisations/{ownerId}/price-system", s.getOrgPriceSystem)
	s.ngs.Routes()
	s.operatorRoutes()
	s.backupRoutes()
	s.api.Handle("/", s.apiHandler(RouteUnmatched, false, s.unmatched))
}

func (s *Server) unmatched(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, pat := s.api.Handler(r2); pat != "/" && pat != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		wire.WriteError(w, http.StatusMethodNotAllowed, wire.ErrIDMethodNotAllowed, "Method not allowed")
		return
	}
	wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "Not Found")
}

func (s *Server) getSelf(w http.ResponseWriter, r *http.Request) {
	wire.WriteJSON(w, http.StatusOK, s.selfFor(r))
}

func (s *Server) listProviders(w http.ResponseWriter, r *http.Request) {
	ps := s.providersFor(r.URL.Query().Get("orgaId"))
	ps = slices.DeleteFunc(ps, func(p Provider) bool { return s.providerHidden(p.ID) })
	wire.WriteJSON(w, http.StatusOK, ps)
}

func (s *Server) getProvider(w http.ResponseWriter, r *http.Request) {
	k := s.catalog.ByID[r.PathValue("providerId")]
	if k == nil || s.providerHidden(k.Spec.ProviderID) {
		wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "provider not found")
		return
	}
	wire.WriteJSON(w, http.StatusOK, s.providerFor(k, r.URL.Query().Get("orgaId")))
}

func (s *Server) listAddons(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return
	}
	wire.WriteJSON(w, http.StatusOK, s.Addons(owner))
}

func (s *Server) createAddon(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return
	}
	data, ok := wire.ReadObjectBody(w, r)
	if !ok {
		return
	}
	var body wire.CreateRequest // "options": null or missing leaves Options nil
	if err := json.Unmarshal(data, &body); err != nil {
		wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, wire.JSONErrorMessage(err))
		return
	}
	missing := map[string]string{}
	if body.ProviderID == "" {
		missing["providerId"] = "required"
	}
	if body.Plan == "" {
		missing["plan"] = "required"
	}
	if body.Region == "" {
		missing["region"] = "required"
	}
	if len(missing) > 0 {
		names := make([]string, 0, len(missing))
		for k := range missing {
			names = append(names, k)
		}
		slices.Sort(names)
		wire.WriteFieldsError(w, "missing required field(s): "+strings.Join(names, ", "), missing)
		return
	}
	for key, v := range body.Options {
		switch v.(type) {
		case string, bool, float64, nil:
		default:
			wire.WriteFieldsError(w, fmt.Sprintf("option %q must be a string", key), map[string]string{"options." + key: "must be a string"})
			return
		}
	}
	k := s.catalog.ByID[body.ProviderID]
	if k == nil || s.providerHidden(body.ProviderID) {
		wire.WriteFieldsError(w, fmt.Sprintf("unknown provider %q", body.ProviderID), map[string]string{"providerId": "unknown provider"})
		return
	}
	plan, private := k.PlanByID[body.Plan], false
	if plan == nil {
		plan = s.privatePlan(owner, k.Spec.ProviderID, body.Plan)
		private = plan != nil
	}
	if plan == nil {
		wire.WriteFieldsError(w, fmt.Sprintf("plan %q is not a plan id of provider %s", body.Plan, k.Spec.ProviderID),
			map[string]string{"plan": "not a plan id of this provider"})
		return
	}
	if !slices.Contains(k.Provider.Regions, body.Region) {
		wire.WriteFieldsError(w, fmt.Sprintf("region %q is not available for provider %s (available: %s)",
			body.Region, k.Spec.ProviderID, strings.Join(k.Provider.Regions, ", ")),
			map[string]string{"region": "not available for this provider"})
		return
	}
	if !slices.Contains(plan.Zones, body.Region) {
		wire.WriteFieldsError(w, fmt.Sprintf("plan %s of provider %s is not available in region %q (available: %s)",
			plan.Slug, k.Spec.ProviderID, body.Region, strings.Join(plan.Zones, ", ")),
			map[string]string{"region": "not available for this plan"})
		return
	}
	if field, msg := catalog.CheckOptions(k.Spec.ProviderID, plan, body.Options); field != "" {
		wire.WriteFieldsError(w, msg, map[string]string{field: "invalid"})
		return
	}
	if v := body.Option("version"); v != "" && k.Spec.Operator != "" {
		// Operator add-ons validate the version at creation and list the
		// supported ones (documentation changelog 2025-07-28).
		if vs, ok := s.versionSpecOf(k.Spec.ProviderID); ok && !slices.Contains(vs.Offered, v) {
			wire.WriteFieldsError(w, fmt.Sprintf("version %q is not supported by %s (supported: %s)", v, k.Spec.ProviderID, strings.Join(vs.Offered, ", ")),
				map[string]string{"options.version": "not supported"})
			return
		}
	}
	a := s.create(owner, k, plan, body, private)
	if d := s.opts.CreateDelay; d > 0 {
		// The add-on already exists: a client giving up now and retrying
		// must look it up by name.
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
		}
	}
	wire.WriteJSON(w, http.StatusOK, a)
}

// create stores a new add-on and returns a copy of it.
func (s *Server) create(owner string, k *catalog.Kind, plan *Plan, body wire.CreateRequest, private bool) Addon {
	now := s.now()
	version := body.Option("version")
	if version == "" {
		version = s.defaultVersionOf(k)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	rec := &addonRecord{owner: owner, seq: s.seq, kind: k, readyAt: now.Add(s.opts.ProvisioningDelay), private: private}
	var id, realID string
	for {
		id = "addon_" + s.newUUID()
		realID = k.Spec.Prefix + "_" + s.newUUID()
		if s.byID[id] == nil && s.byRealID[realID] == nil {
			break
		}
	}
	rec.options = cloneOptions(body.Options)
	rec.version = version
	rec.env = s.generateEnv(k, owner, realID, plan, body.Region, version)
	var name *string
	if body.Name != "" {
		name = strp(body.Name)
	}
	if k.Spec.Operator != "" {
		rec.op = operatoraddon.New(k, s.rng, id, realID, body.Name, owner, version, rec.env)
		if !s.opts.LegacyOperatorEnv {
			rec.env = []Variable{}
		}
	}
	rec.addon = Addon{
		ID:           id,
		Name:         name,
		RealID:       realID,
		Region:       body.Region,
		Provider:     wire.AddonProviderOf(k.Provider),
		Plan:         wire.ClonePlan(*plan),
		CreationDate: uint64(now.UnixMilli()),
		ConfigKeys:   wire.VarNames(rec.env),
	}
	s.byID[id] = rec
	s.byRealID[realID] = rec
	return wire.CloneAddon(rec.addon)
}

func strp(s string) *string { return &s }

func cloneOptions(in map[string]any) map[string]any {
	if in == nil {
		return nil
	}
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// find returns the add-on with this addon_ id or realId. Caller holds s.mu.
func (s *Server) find(id string) *addonRecord {
	if rec := s.byID[id]; rec != nil {
		return rec
	}
	return s.byRealID[id]
}

func (s *Server) getAddon(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return
	}
	s.answerAddon(w, owner, r.PathValue("addonId"), nil)
}

// answerAddon answers the owner's add-on id (addon_ id or realId) after change (nil: none) was
// applied to it under the state lock; 404 when the owner does not hold it.
func (s *Server) answerAddon(w http.ResponseWriter, owner, id string, change func(*addonRecord)) {
	s.lockState()
	rec := s.find(id)
	var a Addon
	if rec != nil && rec.owner == owner {
		if change != nil {
			change(rec)
		}
		a = wire.CloneAddon(rec.addon)
	} else {
		rec = nil
	}
	s.mu.Unlock()
	if rec == nil {
		wire.AddonNotFound(w)
		return
	}
	wire.WriteJSON(w, http.StatusOK, a)
}

// renameAddon is the v2 add-on update: every client sends only {"name"} (clever-tools
// src/models/addon.js rename; clever-client.js update-addon-command.ts; Terraform
// pkg/tmp/addon.go UpdateAddon) and reads back the whole add-on. Both the addon_ id and the
// realId are accepted, as for GET (Terraform renames Cellar add-ons by realId). Other body
// fields are ignored: no source shows the API honouring them here.
func (s *Server) renameAddon(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return
	}
	data, ok := wire.ReadBody(w, r)
	if !ok {
		return
	}
	var body struct {
		Name *string `json:"name"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, wire.JSONErrorMessage(err))
		return
	}
	if body.Name == nil || *body.Name == "" {
		wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, "name is required")
		return
	}
	name := *body.Name
	s.answerAddon(w, owner, r.PathValue("addonId"), func(rec *addonRecord) { rec.addon.Name = &name })
}

// Error ids of the refusals below (not documented by any source).
const errIDProvisioning = 4009

// deleteAddon only accepts the addon_ id, like the real API (clients switch
// to it for DELETE). It answers 200 with a JSON message, as the v2 OpenAPI
// description does (DeprovisionAddonByOrgaAndAddonId returns a Message), and
// refuses (409) to delete an add-on still provisioning (within
// Options.ProvisioningDelay of its creation).
func (s *Server) deleteAddon(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return
	}
	s.lockState()
	rec := s.byID[r.PathValue("addonId")]
	ok := rec != nil && rec.owner == owner
	provisioning := ok && !s.opts.DeleteDuringProvisioning && s.now().Before(rec.readyAt)
	if ok && !provisioning {
		s.remove(rec)
	}
	s.mu.Unlock()
	switch {
	case !ok:
		wire.AddonNotFound(w)
	case provisioning:
		wire.WriteError(w, http.StatusConflict, errIDProvisioning,
			"The add-on is still being provisioned and cannot be deleted yet: retry once it is up")
	default:
		wire.WriteJSON(w, http.StatusOK, MessageBody{ID: 0, Message: "The add-on has been deleted", Type: "success"})
	}
}

// remove deletes rec. Caller holds s.mu.
func (s *Server) remove(rec *addonRecord) {
	delete(s.byID, rec.addon.ID)
	delete(s.byRealID, rec.addon.RealID)
	delete(s.migrating, rec)
}

// visibleEnv is the env as the API shows it now. Caller holds s.mu.
func (s *Server) visibleEnv(rec *addonRecord) []Variable {
	if rec.kind.Spec.ProviderID != "config-provider" && s.now().Before(rec.readyAt) {
		return []Variable{}
	}
	return wire.NonNil(slices.Clone(rec.env))
}

func (s *Server) getAddonEnv(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return
	}
	s.lockState()
	rec := s.find(r.PathValue("addonId"))
	var env []Variable
	if rec != nil && rec.owner == owner {
		env = s.visibleEnv(rec)
	} else {
		rec = nil
	}
	s.mu.Unlock()
	if rec == nil {
		wire.AddonNotFound(w)
		return
	}
	wire.WriteJSON(w, http.StatusOK, env)
}

// renewCellar regenerates a Cellar add-on's secret key (its key id stays) and answers the
// new credentials, as the console's endpoint does.
func (s *Server) renewCellar(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return
	}
	s.lockState()
	rec := s.find(r.PathValue("realId"))
	if rec == nil || rec.owner != owner || rec.kind.Spec.ProviderID != "cellar-addon" {
		s.mu.Unlock()
		wire.AddonNotFound(w)
		return
	}
	env := slices.Clone(rec.env)
	out := map[string]string{}
	for i := range env {
		if env[i].Name == "CELLAR_ADDON_KEY_SECRET" {
			env[i].Value = s.randString(catalog.Alnum, 40)
		}
		switch env[i].Name {
		case "CELLAR_ADDON_HOST":
			out["host"] = env[i].Value
		case "CELLAR_ADDON_KEY_ID":
			out["keyId"] = env[i].Value
		case "CELLAR_ADDON_KEY_SECRET":
			out["keySecret"] = env[i].Value
		}
	}
	rec.env = env
	s.mu.Unlock()
	wire.WriteJSON(w, http.StatusOK, out)
}

// configProvider finds a config-provider add-on by realId (or addon_ id).
// Caller holds s.mu.
func (s *Server) configProvider(id string) *addonRecord {
	rec := s.find(id)
	if rec == nil || rec.kind.Spec.ProviderID != "config-provider" {
		return nil
	}
	return rec
}

func (s *Server) getConfigEnv(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rec := s.configProvider(r.PathValue("realId"))
	var env []Variable
	if rec != nil {
		env = s.visibleEnv(rec)
	}
	s.mu.Unlock()
	if rec == nil {
		wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "config provider add-on not found")
		return
	}
	wire.WriteJSON(w, http.StatusOK, env)
}

func (s *Server) putConfigEnv(w http.ResponseWriter, r *http.Request) {
	data, ok := wire.ReadBody(w, r)
	if !ok {
		return
	}
	var vars []Variable // "null" decodes to an empty list
	if err := json.Unmarshal(data, &vars); err != nil {
		wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, wire.JSONErrorMessage(err))
		return
	}
	if err := wire.ValidateVars(vars); err != nil {
		wire.WriteError(w, http.StatusBadRequest, wire.ErrIDBadRequest, err.Error())
		return
	}
	s.mu.Lock()
	rec := s.configProvider(r.PathValue("realId"))
	var env []Variable
	if rec != nil {
		s.setEnv(rec, vars)
		env = s.visibleEnv(rec)
	}
	s.mu.Unlock()
	if rec == nil {
		wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "config provider add-on not found")
		return
	}
	wire.WriteJSON(w, http.StatusOK, env)
}

// setEnv replaces the env of rec (visible at once) and its configKeys.
// Caller holds s.mu.
func (s *Server) setEnv(rec *addonRecord, vars []Variable) {
	env := wire.NonNil(slices.Clone(vars))
	wire.SortVars(env)
	rec.env = env
	rec.readyAt = time.Time{}
	rec.addon.ConfigKeys = wire.VarNames(env)
}

// ---- state inspection and manipulation (for tests) ----

// Self returns the user served by GET /v2/self.
func (s *Server) Self() Self {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.self
	out.OauthApps = wire.NonNil(slices.Clone(s.self.OauthApps))
	return out
}

// Addons returns the add-ons of ownerID in creation order.
func (s *Server) Addons(ownerID string) []Addon {
	s.lockState()
	defer s.mu.Unlock()
	var recs []*addonRecord
	for _, rec := range s.byID {
		if rec.owner == ownerID {
			recs = append(recs, rec)
		}
	}
	slices.SortFunc(recs, func(a, b *addonRecord) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]Addon, 0, len(recs))
	for _, rec := range recs {
		out = append(out, wire.CloneAddon(rec.addon))
	}
	return out
}

// AllAddons returns every add-on, by owner id, each list in creation order.
func (s *Server) AllAddons() map[string][]Addon {
	s.lockState()
	owners := map[string]bool{}
	for _, rec := range s.byID {
		owners[rec.owner] = true
	}
	s.mu.Unlock()
	out := map[string][]Addon{}
	for o := range owners {
		if l := s.Addons(o); len(l) > 0 {
			out[o] = l
		}
	}
	return out
}

// Env returns the full stored env of an add-on (addon_ id or realId), even
// while the provisioning delay hides it from the API; nil if unknown.
func (s *Server) Env(addonID string) []Variable {
	s.lockState()
	defer s.mu.Unlock()
	rec := s.find(addonID)
	if rec == nil {
		return nil
	}
	return wire.NonNil(slices.Clone(rec.env))
}

// SetEnv replaces the env of an add-on (addon_ id or realId) out of band, as
// a credential rotation would. The new env is visible at once and
// configKeys follows its names.
func (s *Server) SetEnv(addonID string, vars []Variable) error {
	if err := wire.ValidateVars(vars); err != nil {
		return fmt.Errorf("fakeapi: %w", err)
	}
	s.lockState()
	defer s.mu.Unlock()
	rec := s.find(addonID)
	if rec == nil {
		return fmt.Errorf("%w: %s", ErrNotFound, addonID)
	}
	s.setEnv(rec, vars)
	return nil
}

// DeleteAddonOutOfBand deletes an add-on (addon_ id or realId) as if someone
// had deleted it in the console. An empty ownerID matches any owner.
func (s *Server) DeleteAddonOutOfBand(ownerID, addonID string) error {
	s.lockState()
	defer s.mu.Unlock()
	rec := s.find(addonID)
	if rec == nil || (ownerID != "" && rec.owner != ownerID) {
		return fmt.Errorf("%w: %s", ErrNotFound, addonID)
	}
	s.remove(rec)
	return nil
}
