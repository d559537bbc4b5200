package fakeapi

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestOAuthHMACAccepted(t *testing.T) {
	_, c := newTest(t, Options{})
	r := c.do("GET", "/v2/self", nil)
	if r.status != http.StatusOK {
		t.Fatalf("signed request: %d %s", r.status, r.body)
	}
	// Signed query parameters take part in the signature.
	r = c.do("GET", "/v2/products/addonproviders?orgaId="+testOwner+"&x=a%20b", nil)
	if r.status != http.StatusOK {
		t.Fatalf("signed request with query: %d %s", r.status, r.body)
	}
	// A reverse proxy terminating TLS: the client signed https://...
	c.mutate = func(req *http.Request) {
		req.Header.Set("X-Forwarded-Proto", "https")
		req.Header.Set("Authorization", oauthHeader(req.Method, strings.Replace(c.base, "http://", "https://", 1)+req.URL.Path, c.cred, time.Now(), "n1"))
	}
	if r = c.do("GET", "/v2/self", nil); r.status != http.StatusOK {
		t.Fatalf("X-Forwarded-Proto https: %d %s", r.status, r.body)
	}
}

func TestOAuthRejected(t *testing.T) {
	clock := newFakeClock()
	_, c := newTest(t, Options{Now: clock.Now, MaxClockSkew: time.Minute})
	cases := []struct {
		name   string
		mutate func(req *http.Request)
		cred   *Credential
		msg    string
	}{
		{name: "wrong consumer secret", cred: &Credential{testCred.ConsumerKey, "nope", testCred.Token, testCred.Secret}, msg: "bad signature"},
		{name: "wrong token secret", cred: &Credential{testCred.ConsumerKey, testCred.ConsumerSecret, testCred.Token, "nope"}, msg: "bad signature"},
		{name: "unknown token", cred: &Credential{testCred.ConsumerKey, testCred.ConsumerSecret, "other-token", testCred.Secret}, msg: "unknown consumer key or token"},
		{name: "modified path", mutate: func(req *http.Request) {
			req.Header.Set("Authorization", oauthHeader("GET", c.base+"/v2/products/addonproviders", testCred, clock.Now(), "n"))
		}, msg: "bad signature"},
		{name: "modified method", mutate: func(req *http.Request) {
			req.Header.Set("Authorization", oauthHeader("POST", c.base+req.URL.Path, testCred, clock.Now(), "n"))
		}, msg: "bad signature"},
		{name: "stale timestamp", mutate: func(req *http.Request) {
			req.Header.Set("Authorization", oauthHeader("GET", c.base+req.URL.Path, testCred, clock.Now().Add(-2*time.Minute), "n"))
		}, msg: "stale timestamp"},
		{name: "future timestamp", mutate: func(req *http.Request) {
			req.Header.Set("Authorization", oauthHeader("GET", c.base+req.URL.Path, testCred, clock.Now().Add(2*time.Minute), "n"))
		}, msg: "stale timestamp"},
		{name: "missing header", mutate: func(req *http.Request) { req.Header.Del("Authorization") }, msg: "missing authorization"},
		{name: "basic", mutate: func(req *http.Request) { req.SetBasicAuth("u", "p") }, msg: "unsupported authorization scheme"},
		{name: "missing nonce", mutate: func(req *http.Request) {
			h := req.Header.Get("Authorization")
			i := strings.Index(h, `oauth_nonce="`)
			j := strings.Index(h[i:], `", `)
			req.Header.Set("Authorization", h[:i]+h[i+j+3:])
		}, msg: "missing oauth_nonce"},
		{name: "HMAC-SHA256", mutate: func(req *http.Request) {
			req.Header.Set("Authorization", strings.Replace(req.Header.Get("Authorization"), "HMAC-SHA512", "HMAC-SHA256", 1))
		}, msg: "unsupported oauth_signature_method"},
		{name: "bearer on oauth-only server", mutate: func(req *http.Request) { req.Header.Set("Authorization", "Bearer x") }, msg: "not accepted by this host"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cc := *c
			cc.t = t
			if tc.cred != nil {
				cc.cred = *tc.cred
			}
			cc.mutate = tc.mutate
			r := cc.do("GET", "/v2/self", nil)
			e := r.errBody(t, http.StatusUnauthorized)
			if e.ID != 401 || !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("got %+v, want id 401 and message containing %q", e, tc.msg)
			}
			for _, secret := range []string{testCred.ConsumerSecret, testCred.Secret, testCred.Token, testCred.ConsumerKey, "nope"} {
				if strings.Contains(string(r.body), secret) {
					t.Fatalf("error body %s echoes a credential", r.body)
				}
			}
		})
	}
	// Time moves: a request signed with the server clock is accepted.
	clock.Add(time.Hour)
	if r := c.do("GET", "/v2/self", nil); r.status != http.StatusOK {
		t.Fatalf("after clock move: %d %s", r.status, r.body)
	}
}

func TestOAuthPlaintext(t *testing.T) {
	_, c := newTest(t, Options{})
	c.auth = "plaintext"
	if r := c.do("GET", "/v2/self", nil); r.status != http.StatusOK {
		t.Fatalf("PLAINTEXT: %d %s", r.status, r.body)
	}
	// clever-tools form: raw secrets, '&' encoded, no timestamp/nonce/method.
	simple := Credential{ConsumerKey: "ck", ConsumerSecret: "cs", Token: "tk", Secret: "ts"}
	_, c2 := newTest(t, Options{Credentials: []Credential{simple}})
	c2.auth = ""
	c2.mutate = func(req *http.Request) {
		req.Header.Set("Authorization", `OAuth oauth_consumer_key="ck", oauth_token="tk", oauth_signature="cs%26ts"`)
	}
	if r := c2.do("GET", "/v2/self", nil); r.status != http.StatusOK {
		t.Fatalf("clever-tools PLAINTEXT: %d %s", r.status, r.body)
	}
	c2.mutate = func(req *http.Request) {
		req.Header.Set("Authorization", `OAuth oauth_consumer_key="ck", oauth_token="tk", oauth_signature_method="PLAINTEXT", oauth_signature="cs%26wrong"`)
	}
	c2.do("GET", "/v2/self", nil).errBody(t, http.StatusUnauthorized)
}

func TestBearer(t *testing.T) {
	_, api, c := newTestHosts(t, Options{BearerTokens: []string{"tok-1", "tok-2"}})
	c.auth = "bearer:tok-2"
	if r := c.do("GET", "/v2/products/addonproviders", nil); r.status != http.StatusOK {
		t.Fatalf("bearer accepted: %d %s", r.status, r.body)
	}
	c.auth = "bearer:tok-3"
	r := c.do("GET", "/v2/products/addonproviders", nil)
	if e := r.errBody(t, http.StatusUnauthorized); e.Message != msgUnknownBearer || strings.Contains(string(r.body), "tok-3") {
		t.Fatalf("bearer rejected: %+v", e)
	}
	c.auth = "bearer:"
	c.do("GET", "/v2/products/addonproviders", nil).errBody(t, http.StatusUnauthorized)
	// OAuth still works next to bearer tokens, on the API host.
	if r := api.do("GET", "/v2/self", nil); r.status != http.StatusOK {
		t.Fatalf("oauth next to bearer: %d %s", r.status, r.body)
	}
}

func TestSkipAuth(t *testing.T) {
	_, c := newTest(t, Options{SkipAuth: true})
	c.auth = ""
	if r := c.do("GET", "/v2/self", nil); r.status != http.StatusOK {
		t.Fatalf("skip auth: %d %s", r.status, r.body)
	}
}
