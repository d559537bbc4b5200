package fakeapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/oauth"
)

// ---- several identities (users) on one server ----

// Identity is who a credential set authenticates as: GET /v2/self answers with ID and Name
// (the other fields of Self unchanged), and GET /v2/organisations lists the identity's
// personal entry then Organisations only (when not empty; else the server's usual list).
// Options.Identities maps a token (an OAuth1 token or a bearer token) to its identity.
type Identity struct {
	ID            string
	Name          string
	Organisations []string
}

type tokenKey struct{}

// requestToken returns the token of an authenticated request (the OAuth1 oauth_token, or the
// bearer token), "" when there is none. It is only used as a key: never logged or answered.
func requestToken(r *http.Request) string {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, rest, _ := strings.Cut(h, " ")
	switch strings.ToLower(scheme) {
	case "bearer":
		return strings.TrimSpace(rest)
	case "oauth":
		if p, err := oauth.ParseParams(rest); err == nil {
			return p["oauth_token"]
		}
	}
	return ""
}

// withToken records the authenticated request's token (for the per-token counters and the
// identity's answers).
func (s *Server) withToken(r *http.Request, route string) *http.Request {
	tok := requestToken(r)
	if tok == "" {
		return r
	}
	s.countMu.Lock()
	if s.tokenCounts == nil {
		s.tokenCounts = map[string]map[string]int{}
	}
	m := s.tokenCounts[tok]
	if m == nil {
		m = map[string]int{}
		s.tokenCounts[tok] = m
	}
	m[route]++
	s.countMu.Unlock()
	return r.WithContext(context.WithValue(r.Context(), tokenKey{}, tok))
}

// identityOf returns the identity of the request's credentials, if Options.Identities names one.
func (s *Server) identityOf(r *http.Request) (Identity, bool) {
	tok, _ := r.Context().Value(tokenKey{}).(string)
	if tok == "" {
		return Identity{}, false
	}
	id, ok := s.opts.Identities[tok]
	return id, ok
}

// CountsForToken returns the number of authenticated API requests per route key (as Counts)
// made with one token (an OAuth1 token or a bearer token): which credentials the client
// used. ResetCounts clears them.
func (s *Server) CountsForToken(token string) map[string]int {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	out := make(map[string]int, len(s.tokenCounts[token]))
	for k, v := range s.tokenCounts[token] {
		out[k] = v
	}
	return out
}

// selfFor is GET /v2/self for the request's identity.
func (s *Server) selfFor(r *http.Request) Self {
	self := s.Self()
	if id, ok := s.identityOf(r); ok {
		if id.ID != "" {
			self.ID = id.ID
		}
		if id.Name != "" {
			self.Name = id.Name
		}
	}
	return self
}

// organisationsFor is GET /v2/organisations for the request's identity.
func (s *Server) organisationsFor(r *http.Request) []Organisation {
	all := s.Organisations()
	id, ok := s.identityOf(r)
	if !ok {
		return all
	}
	self := s.selfFor(r)
	all[0].ID, all[0].Name, all[0].CustomerFullName = self.ID, self.Name, self.Name
	if len(id.Organisations) == 0 {
		return all
	}
	out := []Organisation{all[0]}
	for _, o := range id.Organisations {
		org := Organisation{ID: o, Name: "Fake organisation " + strings.TrimPrefix(o, "orga_"), CanPay: true, IsTrusted: true, VatState: "VALID"}
		for _, a := range all[1:] {
			if a.ID == o {
				org = a
			}
		}
		out = append(out, org)
	}
	return out
}
