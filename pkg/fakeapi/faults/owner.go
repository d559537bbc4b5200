package faults

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
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
	ExtraEnv []wire.Variable
}

// MsgRevokedToken answers a request signed with a token of Faults.RevokedTokens.
const MsgRevokedToken = "token revoked"

// ownerFault returns the fault of the request's owner, if any.
func (in *Injector) ownerFault(r *http.Request) (OwnerFault, bool) {
	owner := r.PathValue("ownerId")
	if owner == "" {
		return OwnerFault{}, false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	f, ok := in.faults.Owners[owner]
	if ok {
		f.ExtraEnv = slices.Clone(f.ExtraEnv)
		f.Routes = slices.Clone(f.Routes)
	}
	return f, ok
}

// SetOwner sets (f not nil) or lifts (nil) the fault of one owner, leaving every other
// fault as it is.
func (in *Injector) SetOwner(owner string, f *OwnerFault) {
	in.mu.Lock()
	defer in.mu.Unlock()
	owners := make(map[string]OwnerFault, len(in.faults.Owners)+1)
	for k, v := range in.faults.Owners {
		owners[k] = v
	}
	if f == nil {
		delete(owners, owner)
	} else {
		owners[owner] = *f
	}
	in.faults.Owners = owners
}

// ApplyOwner applies the fault of the request's owner ({ownerId}): its latency and status.
// It returns the writer the handler must use (it cuts bodies for MalformedJSON, appends
// ExtraEnv; pass it to Finish once the handler is done) and true when it has answered the
// request itself.
func (in *Injector) ApplyOwner(w http.ResponseWriter, r *http.Request, route string) (http.ResponseWriter, bool) {
	f, ok := in.ownerFault(r)
	if !ok {
		return w, false
	}
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			wire.WriteError(w, http.StatusServiceUnavailable, 503, "request cancelled during injected latency")
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
		wire.WriteError(w, f.Status, id, msg)
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
		return MsgRevokedToken
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

// Finish writes the answer ApplyOwner's writer w buffered, rewritten; it does nothing for
// any other writer.
func Finish(w http.ResponseWriter) {
	if b, ok := w.(*bodyRewriter); ok {
		b.finish()
	}
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
func appendEnv(body []byte, vars []wire.Variable) []byte {
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

// Revoked reports whether token (an OAuth1 oauth_token or a bearer token) is one of
// Faults.RevokedTokens.
func (in *Injector) Revoked(token string) bool {
	in.mu.Lock()
	revoked := slices.Clone(in.faults.RevokedTokens)
	in.mu.Unlock()
	return token != "" && slices.Contains(revoked, token)
}

// Hidden reports whether Faults.HiddenProviders hides providerID.
func (in *Injector) Hidden(providerID string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Contains(in.faults.HiddenProviders, providerID)
}
