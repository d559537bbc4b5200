package fakeapi

import (
	"context"
	"net/http"
	"strings"
)

// clever-tools' own OAuth consumer pair, published in its source as not
// secret (CleverCloud/clever-tools src/config/config.js, OAUTH_CONSUMER_KEY
// and OAUTH_CONSUMER_SECRET defaults: "The disclosure of these tokens is not
// considered as a vulnerability"). Clever Cloud's clients sign a user's
// token + secret with this pair; so does a Credential with an empty consumer.
const (
	CleverToolsConsumerKey    = "T5nFjKeHH4AIlEveuGhB5S3xg8T19e"
	CleverToolsConsumerSecret = "MgVMqTr6fWlf2M0tkC2MXOnhfqBWDT"
)

// Messages of the host rules. They never contain credentials.
const (
	msgBearerOnAPIHost = "bearer tokens are not accepted by this host: send them to the API bridge (api-bridge.clever-cloud.com)"
	msgOAuthOnBridge   = "the API bridge only accepts bearer API tokens (Authorization: Bearer …); sign OAuth1 requests for the API host"
)

type bridgeKey struct{}

// BridgeHandler serves the API bridge host (api-bridge.clever-cloud.com,
// clever-tools' AUTH_BRIDGE_HOST): the same /v2 and /v4 paths and state as
// the Server itself, but authenticated by bearer API tokens only; an OAuth1
// signature is answered 401. /admin/ is served too.
func (s *Server) BridgeHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bridgeKey{}, true)))
	})
}

// onBridge reports whether r came through BridgeHandler.
func onBridge(r *http.Request) bool {
	b, _ := r.Context().Value(bridgeKey{}).(bool)
	return b
}

// hostRule applies the per-host scheme rule before the credentials are
// checked: "" when the scheme is allowed on this host.
func (s *Server) hostRule(r *http.Request) string {
	scheme, _, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	bearer := strings.EqualFold(scheme, "bearer")
	switch {
	case onBridge(r) && !bearer && scheme != "":
		return msgOAuthOnBridge
	case !onBridge(r) && bearer && !s.opts.BearerOnAPIHost:
		return msgBearerOnAPIHost
	}
	return ""
}
