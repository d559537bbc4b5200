package clevercloud

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dghubble/oauth1"
)

// Test vector, built by hand from clever-cloud-api.md §4.2 (not by our code).
const (
	vecConsumerKey    = "ck key"      // space → %20 in the params, %2520 in the base string
	vecConsumerSecret = "cs+secret/=" // → cs%2Bsecret%2F%3D in the key
	vecToken          = "tok_0123"    //
	vecTokenSecret    = "ts~secret&"  // → ts~secret%26 in the key
	vecNonce          = "0f8fad5b-d9cb-469f-a165-70867728950e"
	vecTimestamp      = 1700000000
	vecURL            = "https://api.clever-cloud.com/v2/organisations/orga_00000000-0000-0000-0000-000000000001/addons"
	vecOwner          = "orga_00000000-0000-0000-0000-000000000001"
	vecKey            = "cs%2Bsecret%2F%3D&ts~secret%26"
	vecBaseString     = "GET" +
		"&https%3A%2F%2Fapi.clever-cloud.com%2Fv2%2Forganisations%2Forga_00000000-0000-0000-0000-000000000001%2Faddons" +
		"&oauth_consumer_key%3Dck%2520key" +
		"%26oauth_nonce%3D0f8fad5b-d9cb-469f-a165-70867728950e" +
		"%26oauth_signature_method%3DHMAC-SHA512" +
		"%26oauth_timestamp%3D1700000000" +
		"%26oauth_token%3Dtok_0123" +
		"%26oauth_version%3D1.0"
	// vecSignature was computed outside Go (Python hmac/hashlib/base64) over vecBaseString with vecKey.
	vecSignature = "DnbEkRQLfQXteaGwld5YZOaSCDpIvOdx/AMMeseoN8YM899MrYWJ23rCR/g1Y0h5E5dcZFqLT6dCCpGQcx8iBg=="
)

// parseOAuthHeader parses `OAuth k="v", ...`, percent-decoding values; it also
// returns the keys in header order.
func parseOAuthHeader(t *testing.T, h string) (map[string]string, []string) {
	t.Helper()
	if !strings.HasPrefix(h, "OAuth ") {
		t.Fatalf("Authorization header does not start with \"OAuth \": %q", h)
	}
	params := map[string]string{}
	var order []string
	for _, item := range strings.Split(strings.TrimPrefix(h, "OAuth "), ", ") {
		k, v, ok := strings.Cut(item, "=")
		if !ok || len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
			t.Fatalf("malformed header item %q", item)
		}
		dv, err := url.PathUnescape(v[1 : len(v)-1])
		if err != nil {
			t.Fatalf("header value of %s is not percent-decodable: %v", k, err)
		}
		params[k] = dv
		order = append(order, k)
	}
	return params, order
}

// rewriteTransport sends every request to target while leaving the request as
// signed (so the signature covers the production URL of the test vector).
type rewriteTransport struct {
	target *url.URL
	mu     sync.Mutex
	seen   []*http.Request
}

func (rt *rewriteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	rt.seen = append(rt.seen, req)
	rt.mu.Unlock()
	r2 := req.Clone(req.Context())
	r2.URL.Scheme = rt.target.Scheme
	r2.URL.Host = rt.target.Host
	r2.Host = rt.target.Host
	return http.DefaultTransport.RoundTrip(r2)
}

func TestOAuthSignatureVector(t *testing.T) {
	// Expected signature computed independently over the literal base string.
	mac := hmac.New(sha512.New, []byte(vecKey))
	mac.Write([]byte(vecBaseString))
	wantSig := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if wantSig != vecSignature {
		t.Fatalf("crypto/hmac signature %q differs from the externally computed %q", wantSig, vecSignature)
	}

	var gotHeader string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeader = r.Header.Get("Authorization")
		if r.URL.EscapedPath() != "/v2/organisations/"+vecOwner+"/addons" {
			t.Errorf("path = %q", r.URL.EscapedPath())
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[]`))
	}))
	defer srv.Close()
	target, _ := url.Parse(srv.URL)

	c, err := New(Config{
		// Endpoint left empty: OAuth1 → DefaultEndpoint, the URL of the vector.
		Credentials: Credentials{ConsumerKey: vecConsumerKey, ConsumerSecret: vecConsumerSecret, Token: vecToken, Secret: vecTokenSecret},
		HTTPClient:  &http.Client{Transport: &rewriteTransport{target: target}},
		RateLimit:   -1,
		Now:         func() time.Time { return time.Unix(vecTimestamp, 0) },
		Nonce:       func() string { return vecNonce },
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint() != DefaultEndpoint {
		t.Fatalf("Endpoint() = %q, want %q", c.Endpoint(), DefaultEndpoint)
	}
	if _, err := c.ListAddons(context.Background(), vecOwner); err != nil {
		t.Fatal(err)
	}

	params, order := parseOAuthHeader(t, gotHeader)
	want := map[string]string{
		"oauth_consumer_key":     vecConsumerKey,
		"oauth_nonce":            vecNonce,
		"oauth_signature":        wantSig,
		"oauth_signature_method": "HMAC-SHA512",
		"oauth_timestamp":        "1700000000",
		"oauth_token":            vecToken,
		"oauth_version":          "1.0",
	}
	if len(params) != len(want) {
		t.Errorf("header has %d params %v, want %d", len(params), order, len(want))
	}
	for k, v := range want {
		if params[k] != v {
			t.Errorf("%s = %q, want %q", k, params[k], v)
		}
	}
	if !sort.StringsAreSorted(order) {
		t.Errorf("header params not sorted: %v", order)
	}
	// Values are sent percent-encoded (RFC 5849 §3.5.1).
	if !strings.Contains(gotHeader, `oauth_consumer_key="ck%20key"`) {
		t.Errorf("consumer key not percent-encoded in header: %q", gotHeader)
	}
	if !strings.Contains(gotHeader, `oauth_signature="`+oauth1.PercentEncode(wantSig)+`"`) {
		t.Errorf("signature not percent-encoded in header")
	}
}

func TestHMAC512Signer(t *testing.T) {
	var s oauth1.Signer = &HMAC512Signer{ConsumerSecret: vecConsumerSecret}
	if s.Name() != "HMAC-SHA512" {
		t.Fatalf("Name() = %q", s.Name())
	}
	got, err := s.Sign(vecTokenSecret, vecBaseString)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha512.New, []byte(vecKey))
	mac.Write([]byte(vecBaseString))
	if want := base64.StdEncoding.EncodeToString(mac.Sum(nil)); got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
	if len(got) != 88 || !strings.HasSuffix(got, "==") {
		t.Fatalf("signature %q is not padded standard base64 of 64 bytes", got)
	}
}

// verifyOAuth is an independent server-side check (what the fake server does):
// rebuild the base URI from the request as received, percent-decode header values.
func verifyOAuth(r *http.Request, consumerSecret, tokenSecret string) bool {
	h := r.Header.Get("Authorization")
	if !strings.HasPrefix(h, "OAuth ") {
		return false
	}
	params := map[string]string{}
	for _, item := range strings.Split(strings.TrimPrefix(h, "OAuth "), ", ") {
		k, v, _ := strings.Cut(item, "=")
		dv, err := url.PathUnescape(strings.Trim(v, `"`))
		if err != nil {
			return false
		}
		params[k] = dv
	}
	sig := params["oauth_signature"]
	delete(params, "oauth_signature")
	var pairs []string
	for k, v := range params {
		pairs = append(pairs, k+"="+oauth1.PercentEncode(v))
	}
	sort.Strings(pairs)
	base := oauth1.PercentEncode(r.Method) + "&" +
		oauth1.PercentEncode("http://"+r.Host+r.URL.EscapedPath()) + "&" +
		oauth1.PercentEncode(strings.Join(pairs, "&"))
	mac := hmac.New(sha512.New, []byte(oauth1.PercentEncode(consumerSecret)+"&"+oauth1.PercentEncode(tokenSecret)))
	mac.Write([]byte(base))
	return hmac.Equal([]byte(sig), []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil))))
}

func TestOAuthVerifiedByServerOnEveryMethod(t *testing.T) {
	creds := Credentials{ConsumerKey: "ck-verify", ConsumerSecret: "c/s+e=c", Token: "tok-verify", Secret: "t&s"}
	var mu sync.Mutex
	nonces := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !verifyOAuth(r, creds.ConsumerSecret, creds.Secret) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"id":401,"message":"bad signature","type":"error"}`))
			return
		}
		p, _ := parseOAuthHeader(t, r.Header.Get("Authorization"))
		mu.Lock()
		if nonces[p["oauth_nonce"]] {
			t.Errorf("nonce reused: %s", p["oauth_nonce"])
		}
		nonces[p["oauth_nonce"]] = true
		mu.Unlock()
		if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(p["oauth_nonce"]) {
			t.Errorf("nonce %q is not a UUID v4", p["oauth_nonce"])
		}
		if d := time.Since(time.Unix(mustAtoi(t, p["oauth_timestamp"]), 0)); d < -time.Minute || d > time.Minute {
			t.Errorf("timestamp off by %v", d)
		}
		switch r.Method {
		case http.MethodGet:
			if strings.HasSuffix(r.URL.Path, "/env") {
				_, _ = w.Write([]byte(`[]`))
			} else {
				_, _ = w.Write([]byte(`{"id":"addon_1"}`))
			}
		case http.MethodPost:
			_, _ = w.Write([]byte(`{"id":"addon_2"}`))
		case http.MethodPut:
			_, _ = w.Write([]byte(`[]`))
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()
	c := mustClient(t, Config{Endpoint: srv.URL, Credentials: creds})
	ctx := context.Background()
	if _, err := c.GetAddon(ctx, "orga_1", "addon 1/x"); err != nil {
		t.Errorf("GET: %v", err)
	}
	if _, err := c.CreateAddon(ctx, "orga_1", CreateOpts{Name: "n"}); err != nil {
		t.Errorf("POST: %v", err)
	}
	if _, err := c.PutConfigProviderEnv(ctx, "config_1", []Variable{{Name: "A", Value: "b"}}); err != nil {
		t.Errorf("PUT: %v", err)
	}
	if err := c.DeleteAddon(ctx, "orga_1", "addon_1"); err != nil {
		t.Errorf("DELETE: %v", err)
	}
	if _, err := c.GetAddonEnv(ctx, "orga_1", "addon_1"); err != nil {
		t.Errorf("GET env: %v", err)
	}
}

func TestBaseURI(t *testing.T) {
	cases := map[string]string{
		"https://API.Clever-Cloud.com:443/v2/self": "https://api.clever-cloud.com/v2/self",
		"http://127.0.0.1:80/v2/self":              "http://127.0.0.1/v2/self",
		"http://127.0.0.1:8080/v2/self?x=1":        "http://127.0.0.1:8080/v2/self",
		"https://h:8443/v2/a%2Fb":                  "https://h:8443/v2/a%2Fb",
		"http://[::1]:8080/x":                      "http://[::1]:8080/x",
	}
	for in, want := range cases {
		u, _ := url.Parse(in)
		if got := baseURI(u); got != want {
			t.Errorf("baseURI(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSignatureBaseStringQueryRaw(t *testing.T) {
	// §4.2: query pairs are added raw (not decoded) then percent-encoded, oauth keys skipped.
	u, _ := url.Parse("https://h/p?b=x%20y&a=1&oauth_nonce=evil")
	got := signatureBaseString("get", u, map[string]string{"oauth_nonce": "n"})
	want := "GET&https%3A%2F%2Fh%2Fp&a%3D1%26b%3Dx%252520y%26oauth_nonce%3Dn"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
