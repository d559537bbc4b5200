// Package fakeapi is a stateful, in-memory fake of the Clever Cloud API as
// the operator uses it (see docs/fake-api.md). It is an http.Handler meant
// for tests, ours and users':
//
//	srv, ts := fakeapi.NewTestServer(fakeapi.Options{SkipAuth: true})
//	defer ts.Close()
//	// point the client at ts.URL, then inspect srv.Addons("orga_..."), srv.Counts()...
//
// It serves the add-on endpoints under /v2 and /v4 (create, get, list,
// delete, env, migrations, provider info; OAuth1 HMAC-SHA512 /
// PLAINTEXT or Bearer authentication), seeds every provider and plan of the
// operator's kinds, can inject latency, 503s, 429s and outages, counts calls
// per route, and exposes unauthenticated test-only /admin/ endpoints.
// The standalone binary is hack/fakeapi.
package fakeapi
