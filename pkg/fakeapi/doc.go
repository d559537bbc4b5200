// Package fakeapi is a stateful, in-memory fake of the Clever Cloud API as
// the operator uses it (see docs/fake-api.md). It is an http.Handler meant
// for tests, ours and users':
//
//	srv, ts := fakeapi.NewTestServer(fakeapi.Options{SkipAuth: true})
//	defer ts.Close()
//	// point the client at ts.URL, then inspect srv.Addons("orga_..."), srv.Counts()...
//
// It models the API as it is today, with its own wire types written from
// Clever Cloud's clients (docs/api-sources.md), not the operator's: the add-on
// endpoints under /v2 and /v4 (create, get, list, delete answering 200 + JSON,
// env, migrations, provider info, organisations, the v4 data of the Keycloak,
// Metabase, Matomo and Otoroshi add-ons), OAuth1 (HMAC-SHA512 / PLAINTEXT,
// clever-tools' published consumer pair for a bare token + secret) on the API
// host and bearer tokens on the bridge host only (NewTestServers,
// BridgeHandler). It seeds every provider and plan of the operator's kinds,
// can inject latency, 503s, 429s and outages, counts calls per route and per
// owner, and exposes unauthenticated test-only /admin/ endpoints.
// The standalone binary is hack/fakeapi.
//
// This package holds the server's state and its handlers. What needs no
// server state lives in its subpackages, none of which imports this one: wire
// (the wire types, re-exported here), catalog (providers, plans, versions,
// prices, create options, generated env), oauth (OAuth1 verification), faults
// (fault descriptions and their injection), migration (one migration's
// timeline), networkgroups (Network Groups, under the server's lock) and
// operatoraddon (the v4 data of the operator add-ons).
package fakeapi
