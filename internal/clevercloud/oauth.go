package clevercloud

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dghubble/oauth1"
)

// OAuth 1.0a signing as the Clever Cloud Rust SDK (oauth10a 2.0.2) does it,
// clever-cloud-api.md §4.2.
//
// github.com/dghubble/oauth1 v0.7.3 is used for its Signer interface and its
// PercentEncode (which is exactly §4.2's `percent`: everything except
// A-Z a-z 0-9 - . _ ~ becomes %XX with uppercase hex). Its Transport/auther is NOT
// used because (1) its clock is not injectable, (2) it would sign
// application/x-www-form-urlencoded bodies (ours are JSON, so harmless) and
// (3) it decodes then re-encodes query values whereas §4.2 adds them raw.
// The base string and the header are therefore built here.
//
// Header encoding: the Authorization header values are sent percent-encoded
// (RFC 5849 §3.5.1, like dghubble/oauth1 and Clever Cloud's own Go client), e.g.
// oauth_signature="abc%2Bdef%3D%3D". The Rust SDK sends them raw; a server that
// percent-decodes header values (RFC 5849, the fake server, the real API) accepts both,
// and the encoded form also survives decoders that turn '+' into a space.

const (
	oauthConsumerKey     = "oauth_consumer_key"
	oauthNonce           = "oauth_nonce"
	oauthSignature       = "oauth_signature"
	oauthSignatureMethod = "oauth_signature_method"
	oauthTimestamp       = "oauth_timestamp"
	oauthToken           = "oauth_token"
	oauthVersion         = "oauth_version"
)

// HMAC512Signer signs OAuth1 base strings with HMAC-SHA512. It implements
// github.com/dghubble/oauth1's Signer interface, so it can also be plugged into
// oauth1.Config.Signer.
type HMAC512Signer struct {
	ConsumerSecret string
}

var _ oauth1.Signer = (*HMAC512Signer)(nil)

// Name returns "HMAC-SHA512", the oauth_signature_method value.
func (s *HMAC512Signer) Name() string { return "HMAC-SHA512" }

// Sign returns base64(HMAC-SHA512(percent(consumerSecret)&percent(tokenSecret), message))
// using standard base64 with padding.
func (s *HMAC512Signer) Sign(tokenSecret, message string) (string, error) {
	key := oauth1.PercentEncode(s.ConsumerSecret) + "&" + oauth1.PercentEncode(tokenSecret)
	mac := hmac.New(sha512.New, []byte(key))
	mac.Write([]byte(message))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// oauthSigner produces the Authorization header of one request.
type oauthSigner struct {
	consumerKey string
	token       string
	tokenSecret string
	signer      oauth1.Signer
	now         func() time.Time
	nonce       func() string
}

// authorize sets the OAuth Authorization header on req (fresh nonce and timestamp).
func (o *oauthSigner) authorize(req *http.Request) error {
	params := map[string]string{
		oauthConsumerKey:     o.consumerKey,
		oauthNonce:           o.nonce(),
		oauthSignatureMethod: o.signer.Name(),
		oauthTimestamp:       strconv.FormatInt(o.now().Unix(), 10),
		oauthToken:           o.token,
		oauthVersion:         "1.0",
	}
	base := signatureBaseString(req.Method, req.URL, params)
	sig, err := o.signer.Sign(o.tokenSecret, base)
	if err != nil {
		return err
	}
	params[oauthSignature] = sig
	req.Header.Set("Authorization", oauthHeaderValue(params))
	return nil
}

// signatureBaseString builds percent(METHOD)&percent(base URI)&percent(params) (§4.2 steps 2-4).
// oauthParams must not contain oauth_signature.
func signatureBaseString(method string, u *url.URL, oauthParams map[string]string) string {
	pairs := make([]string, 0, len(oauthParams)+4)
	for k, v := range oauthParams {
		pairs = append(pairs, k+"="+oauth1.PercentEncode(v))
	}
	// Query pairs are taken raw (not decoded), unless the key is an oauth parameter.
	if u.RawQuery != "" {
		for _, kv := range strings.Split(u.RawQuery, "&") {
			if kv == "" {
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			if _, isOAuth := oauthParams[k]; isOAuth || k == oauthSignature {
				continue
			}
			pairs = append(pairs, k+"="+oauth1.PercentEncode(v))
		}
	}
	sort.Strings(pairs)
	return oauth1.PercentEncode(strings.ToUpper(method)) + "&" +
		oauth1.PercentEncode(baseURI(u)) + "&" +
		oauth1.PercentEncode(strings.Join(pairs, "&"))
}

// baseURI is scheme://host[:port]/path as sent, without query: scheme and host
// lowercased and the scheme's default port dropped (what the Rust url crate does).
func baseURI(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") { // IPv6 literal
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host + path
}

// oauthHeaderValue formats `OAuth k="v", ...` sorted by key, values percent-encoded.
func oauthHeaderValue(params map[string]string) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	items := make([]string, len(keys))
	for i, k := range keys {
		items[i] = k + `="` + oauth1.PercentEncode(params[k]) + `"`
	}
	return "OAuth " + strings.Join(items, ", ")
}

// newUUIDv4 returns a random RFC 4122 version 4 UUID string.
func newUUIDv4() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}
