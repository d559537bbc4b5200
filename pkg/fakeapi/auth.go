package fakeapi

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/oauth"
)

// Authentication failure messages besides the OAuth1 ones (oauth.Msg…). They
// never contain any part of the request's credentials.
const (
	msgMissingAuth     = "missing authorization: send an OAuth1 or Bearer Authorization header"
	msgUnsupportedAuth = "unsupported authorization scheme (expected OAuth or Bearer)"
	msgUnknownBearer   = "unknown bearer token"
)

// authenticate checks the Authorization header of r. It returns "" when the
// request is authenticated, otherwise a message safe to send and log.
func (s *Server) authenticate(r *http.Request) string {
	if s.opts.SkipAuth {
		return ""
	}
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if h == "" {
		return msgMissingAuth
	}
	if msg := s.hostRule(r); msg != "" {
		return msg
	}
	scheme, rest, _ := strings.Cut(h, " ")
	switch strings.ToLower(scheme) {
	case "oauth":
		return oauth.Verify(r, rest, s.oauthCreds, s.now, s.opts.MaxClockSkew)
	case "bearer":
		return s.checkBearer(strings.TrimSpace(rest))
	default:
		return msgUnsupportedAuth
	}
}

func (s *Server) checkBearer(token string) string {
	ok := 0
	for _, t := range s.opts.BearerTokens {
		if t == "" {
			continue
		}
		ok |= subtle.ConstantTimeCompare([]byte(t), []byte(token))
	}
	if token == "" || ok == 0 {
		return msgUnknownBearer
	}
	return ""
}
