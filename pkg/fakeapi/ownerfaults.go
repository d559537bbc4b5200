package fakeapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OwnerFault is a fault scoped to one organisation (or user) id: it applies only to the
// API requests whose path names that owner (/v2/organisations/{ownerId}/…), so a test can
// break one organisation while every other keeps working.
type OwnerFault struct {
	// Status, when non-zero, answers every request for the owner with this HTTP status after
	// authentication, e.g. 403 ("the credentials cannot access this organisation"), 500, 429.
	// The body is the usual {"id":…,"message":…,"type":"error"} error.
	Status int
	// Routes, when not empty, limits Status to the requests on these route templates (e.g.
	// "POST /v2/organisations/{ownerId}/addons"); the owner's other requests are answered.
	Routes []string
	// Message replaces the default message of Status answers.
	Message string
	// RetryAfter is sent as a Retry-After header (whole seconds, rounded up) with Status.
	RetryAfter time.Duration
	// Latency is added to every request for the owner (before Status), on top of the
	// server-wide latency.
	Latency time.Duration
	// MalformedJSON answers 2xx requests with a body cut in half (invalid JSON), as a
	// broken proxy or a truncated response would.
	MalformedJSON bool
	// ExtraEnv is appended to every env answer (GET …/addons/{addonId}/env) of the owner's
	// add-ons, e.g. a huge value or unicode. It is not stored: Env shows the stored env.
	ExtraEnv []Variable
}

// msgRevokedToken answers a request signed with a token of Faults.RevokedTokens.
const msgRevokedToken = "token revoked"

// ownerFault returns the fault of the request's owner, if any.
func (s *Server) ownerFault(r *http.Request) (OwnerFault, bool) {
	owner := r.PathValue("ownerId")
	if owner == "" {
		return OwnerFault{}, false
	}
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	f, ok := s.faults.Owners[owner]
	if ok {
		f.ExtraEnv = slices.Clone(f.ExtraEnv)
		f.Routes = slices.Clone(f.Routes)
	}
	return f, ok
}

// SetOwnerFault sets (f not nil) or lifts (nil) the fault of one owner, leaving every other
// fault as it is: a test breaks its own organisation without touching the others'.
func (s *Server) SetOwnerFault(owner string, f *OwnerFault) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	owners := make(map[string]OwnerFault, len(s.faults.Owners)+1)
	for k, v := range s.faults.Owners {
		owners[k] = v
	}
	if f == nil {
		delete(owners, owner)
	} else {
		owners[owner] = *f
	}
	s.faults.Owners = owners
}

// applyOwnerFault applies the request owner's latency and status. It returns the writer the
// handler must use (it cuts bodies for MalformedJSON, appends ExtraEnv) and true when it has
// answered the request itself.
func (s *Server) applyOwnerFault(w http.ResponseWriter, r *http.Request, route string) (http.ResponseWriter, bool) {
	f, ok := s.ownerFault(r)
	if !ok {
		return w, false
	}
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			writeError(w, http.StatusServiceUnavailable, 503, "request cancelled during injected latency")
			return w, true
		}
	}
	if f.Status != 0 && (len(f.Routes) == 0 || slices.Contains(f.Routes, route)) {
		msg := f.Message
		if msg == "" {
			msg = defaultOwnerFaultMessage(f.Status)
		}
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int((f.RetryAfter+time.Second-1)/time.Second))))
		}
		id := int64(f.Status)
		if f.Status >= 400 && f.Status < 500 && f.Status != http.StatusTooManyRequests && f.Status != http.StatusUnauthorized {
			id = int64(f.Status * 10)
		}
		writeError(w, f.Status, id, msg)
		return w, true
	}
	if f.MalformedJSON || (len(f.ExtraEnv) > 0 && route == "GET /v2/organisations/{ownerId}/addons/{addonId}/env") {
		return &bodyRewriter{ResponseWriter: w, fault: f, env: route == "GET /v2/organisations/{ownerId}/addons/{addonId}/env"}, false
	}
	return w, false
}

func defaultOwnerFaultMessage(status int) string {
	switch status {
	case http.StatusForbidden:
		return "You don't have access to this organisation"
	case http.StatusUnauthorized:
		return msgRevokedToken
	case http.StatusTooManyRequests:
		return "Too many requests: injected rate limit"
	default:
		return "Error from provider: injected owner fault (HTTP " + strconv.Itoa(status) + ")"
	}
}

// bodyRewriter buffers a handler's answer and rewrites 2xx bodies on Flush.
type bodyRewriter struct {
	http.ResponseWriter
	fault  OwnerFault
	env    bool
	status int
	buf    bytes.Buffer
}

func (b *bodyRewriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bodyRewriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.buf.Write(p)
}

// finish writes the (rewritten) answer.
func (b *bodyRewriter) finish() {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	body := b.buf.Bytes()
	if b.status >= 200 && b.status < 300 && len(body) > 0 {
		if b.env && len(b.fault.ExtraEnv) > 0 {
			body = appendEnv(body, b.fault.ExtraEnv)
		}
		if b.fault.MalformedJSON {
			body = body[:len(body)/2]
		}
	}
	b.ResponseWriter.Header().Del("Content-Length")
	b.ResponseWriter.WriteHeader(b.status)
	_, _ = b.ResponseWriter.Write(body)
}

// appendEnv adds vars to a JSON env list.
func appendEnv(body []byte, vars []Variable) []byte {
	var out bytes.Buffer
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) < 2 || trimmed[0] != '[' {
		return body
	}
	extra, err := json.Marshal(vars)
	if err != nil {
		return body
	}
	inner := bytes.TrimSpace(trimmed[1 : len(trimmed)-1])
	out.WriteByte('[')
	out.Write(inner)
	if len(inner) > 0 && len(extra) > 2 {
		out.WriteByte(',')
	}
	out.Write(extra[1 : len(extra)-1])
	out.WriteByte(']')
	return out.Bytes()
}

// revokedToken reports whether the request is signed with a token of Faults.RevokedTokens
// (the OAuth1 oauth_token or the bearer token).
func (s *Server) revokedToken(r *http.Request) bool {
	s.faultMu.Lock()
	revoked := slices.Clone(s.faults.RevokedTokens)
	s.faultMu.Unlock()
	if len(revoked) == 0 {
		return false
	}
	scheme, rest, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	var token string
	switch strings.ToLower(scheme) {
	case "oauth":
		params, err := parseOAuthParams(rest)
		if err != nil {
			return false
		}
		token = params["oauth_token"]
	case "bearer":
		token = strings.TrimSpace(rest)
	}
	return token != "" && slices.Contains(revoked, token)
}

// providerHidden reports whether Faults.HiddenProviders hides providerID.
func (s *Server) providerHidden(providerID string) bool {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	return slices.Contains(s.faults.HiddenProviders, providerID)
}

// requestOwner is the owner a request is about: the {ownerId} path value, or the owner of the
// config-provider add-on named by {realId}; "" when none.
func (s *Server) requestOwner(r *http.Request) string {
	if o := r.PathValue("ownerId"); o != "" {
		return o
	}
	if o := r.URL.Query().Get("orgaId"); o != "" {
		return o
	}
	if o := r.URL.Query().Get("ownerId"); o != "" {
		return o
	}
	if id := r.PathValue("realId"); id != "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		if rec := s.find(id); rec != nil {
			return rec.owner
		}
	}
	return ""
}

func (s *Server) countOwner(owner, route string) {
	if owner == "" {
		return
	}
	s.countMu.Lock()
	if s.byOwner == nil {
		s.byOwner = map[string]int{}
	}
	s.byOwner[owner]++
	m := s.ownerCounts[owner]
	if m == nil {
		m = map[string]int{}
		s.ownerCounts[owner] = m
	}
	m[route]++
	s.countMu.Unlock()
}

// CountsFor returns, for one owner id, the number of API requests per route
// key (as Counts) whose path names that owner ({ownerId}), whose orgaId or
// ownerId query names it, or whose {realId} is one of its add-ons (v4
// routes). Specs that each use their own owner id get their own counters
// this way, even when they share one Server. ResetCounts clears them.
func (s *Server) CountsFor(owner string) map[string]int {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	out := make(map[string]int, len(s.ownerCounts[owner]))
	for k, v := range s.ownerCounts[owner] {
		out[k] = v
	}
	return out
}

// CountsByOwner returns the number of API requests per owner id (organisation or user) they
// were about: the {ownerId} of the path, or the owner of the config-provider add-on of a v4
// env route. Requests about no owner (catalogue, self) are not in it. ResetCounts clears it.
func (s *Server) CountsByOwner() map[string]int {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	out := make(map[string]int, len(s.byOwner))
	for k, v := range s.byOwner {
		out[k] = v
	}
	return out
}
