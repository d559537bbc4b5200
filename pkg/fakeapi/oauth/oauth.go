// Package oauth verifies the OAuth 1.0a signatures the fake Clever Cloud API
// accepts on its API host: HMAC-SHA512 (and HMAC-SHA1) over the signature base
// string as Clever Cloud's clients build it, and PLAINTEXT as clever-tools
// sends it. It knows nothing of the server: the caller passes the accepted
// credentials and the clock.
package oauth

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Credential is one accepted OAuth1 credential set.
type Credential struct {
	ConsumerKey    string
	ConsumerSecret string
	Token          string
	TokenSecret    string
}

// Verification failure messages. They never contain any part of the
// request's credentials.
const (
	MsgMalformed      = "malformed OAuth authorization header"
	MsgBadMethod      = "unsupported oauth_signature_method (expected HMAC-SHA512, HMAC-SHA1 or PLAINTEXT)"
	MsgBadVersion     = "unsupported oauth_version (expected 1.0)"
	MsgBadTimestamp   = "invalid oauth_timestamp"
	MsgStaleTimestamp = "stale timestamp: oauth_timestamp is outside the accepted clock skew"
	MsgUnknownToken   = "unknown consumer key or token"
	MsgBadSignature   = "bad signature"
)

// ParseParams parses `k="v", k2="v2"` (the part of an Authorization header
// after "OAuth ").
// Values are percent-decoded (RFC 5849 §3.5.1); decoding is harmless for
// clients that send raw base64 values. '+' is NOT turned into a space.
func ParseParams(s string) (map[string]string, error) {
	params := map[string]string{}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			return nil, errors.New("item without '='")
		}
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		dv, err := url.PathUnescape(v)
		if err != nil {
			return nil, err
		}
		if _, dup := params[k]; dup {
			return nil, errors.New("duplicate parameter")
		}
		params[k] = dv
	}
	return params, nil
}

// Verify checks the OAuth1 parameters header (the part of r's Authorization
// header after "OAuth ") against creds: HMAC-SHA512 and HMAC-SHA1 signatures
// over r, or PLAINTEXT ("<consumer_secret>&<token_secret>"), with
// |now() - oauth_timestamp| <= maxSkew when a timestamp is sent. It returns ""
// when r is authenticated, otherwise one of the Msg messages (or "missing
// <parameter>"), safe to send and log.
func Verify(r *http.Request, header string, creds []Credential, now func() time.Time, maxSkew time.Duration) string {
	params, err := ParseParams(header)
	if err != nil {
		return MsgMalformed
	}
	method := params["oauth_signature_method"]
	plaintext := method == "PLAINTEXT" || method == ""
	if !plaintext && method != "HMAC-SHA512" && method != "HMAC-SHA1" {
		return MsgBadMethod
	}
	required := []string{"oauth_consumer_key", "oauth_token", "oauth_signature"}
	if !plaintext {
		// PLAINTEXT clients (clever-tools) may omit these; HMAC clients may not.
		required = append(required, "oauth_signature_method", "oauth_timestamp", "oauth_nonce")
	}
	for _, k := range required {
		if params[k] == "" {
			return "missing " + k
		}
	}
	if v, ok := params["oauth_version"]; ok && v != "1.0" {
		return MsgBadVersion
	}
	if ts, ok := params["oauth_timestamp"]; ok {
		sec, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			return MsgBadTimestamp
		}
		skew := maxSkew
		d := now().Sub(time.Unix(sec, 0))
		if d > skew || d < -skew {
			return MsgStaleTimestamp
		}
	}
	cred, ok := findCredential(creds, params["oauth_consumer_key"], params["oauth_token"])
	if !ok {
		return MsgUnknownToken
	}
	got := []byte(params["oauth_signature"])
	key := percentEncode(cred.ConsumerSecret) + "&" + percentEncode(cred.TokenSecret)
	if plaintext {
		if hmac.Equal(got, []byte(key)) || hmac.Equal(got, []byte(cred.ConsumerSecret+"&"+cred.TokenSecret)) {
			return ""
		}
		return MsgBadSignature
	}
	newHash := sha512.New
	if method == "HMAC-SHA1" {
		newHash = sha1.New
	}
	for _, base := range signatureBaseStrings(r, params) {
		mac := hmac.New(newHash, []byte(key))
		mac.Write([]byte(base))
		want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
		if hmac.Equal(got, []byte(want)) {
			return ""
		}
	}
	return MsgBadSignature
}

func findCredential(creds []Credential, consumerKey, token string) (Credential, bool) {
	for _, c := range creds {
		k := subtle.ConstantTimeCompare([]byte(c.ConsumerKey), []byte(consumerKey))
		t := subtle.ConstantTimeCompare([]byte(c.Token), []byte(token))
		if k&t == 1 {
			return c, true
		}
	}
	return Credential{}, false
}

// signatureBaseStrings returns the candidate OAuth1 signature base strings of
// r: the oauth10a form (query values taken raw, as the Rust SDK does) and the
// RFC 5849 form (query values decoded), each for the Host header as sent and
// lowercased (RFC 5849 §3.4.1.2; the Rust SDK's url crate and
// internal/clevercloud lowercase it), with and without a default port. Most
// requests yield a single candidate.
func signatureBaseStrings(r *http.Request, oauthParams map[string]string) []string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if fp := r.Header.Get("X-Forwarded-Proto"); fp != "" {
		first, _, _ := strings.Cut(fp, ",")
		if first = strings.ToLower(strings.TrimSpace(first)); first == "http" || first == "https" {
			scheme = first
		}
	}
	hostForms := []string{r.Host}
	if lower := strings.ToLower(r.Host); lower != r.Host {
		hostForms = append(hostForms, lower)
	}
	var hosts []string
	for _, host := range hostForms {
		hosts = append(hosts, host)
		if h, port, err := net.SplitHostPort(host); err == nil &&
			((scheme == "http" && port == "80") || (scheme == "https" && port == "443")) {
			hosts = append(hosts, h)
		}
	}
	path := r.URL.EscapedPath()

	var base []string
	for k, v := range oauthParams {
		if k == "oauth_signature" || k == "realm" {
			continue
		}
		base = append(base, k+"="+percentEncode(v))
	}

	paramSets := [][]string{base}
	if r.URL.RawQuery != "" {
		raw := slicesClone(base)
		rfc := slicesClone(base)
		for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
			if pair == "" {
				continue
			}
			k, v, _ := strings.Cut(pair, "=")
			if _, isOAuth := oauthParams[k]; !isOAuth {
				raw = append(raw, k+"="+percentEncode(v))
			}
			dk, err1 := url.QueryUnescape(k)
			dv, err2 := url.QueryUnescape(v)
			if err1 == nil && err2 == nil {
				rfc = append(rfc, percentEncode(dk)+"="+percentEncode(dv))
			}
		}
		paramSets = [][]string{raw, rfc}
	}

	var out []string
	for _, ps := range paramSets {
		sort.Strings(ps)
		joined := strings.Join(ps, "&")
		for _, h := range hosts {
			out = append(out, percentEncode(strings.ToUpper(r.Method))+"&"+
				percentEncode(scheme+"://"+h+path)+"&"+percentEncode(joined))
		}
	}
	return out
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// percentEncode encodes everything except the RFC 3986 unreserved characters
// (A-Z a-z 0-9 - . _ ~), with uppercase hex digits.
func percentEncode(s string) string {
	const upperHex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('A' <= c && c <= 'Z') || ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') ||
			c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
	return b.String()
}
