package config

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"
)

// Where an expiry was learnt, as returned by APIConfig.Expiry.
const (
	ExpiryFromConfig = "config"     // api.token-expiration (or clever-tools.json's expirationDate)
	ExpiryFromClaims = "jwt-claims" // the "exp" claim of a bearer token that is a JWT
)

// parseExpiration reads an expiry date: RFC 3339 (what clever-tools writes in
// clever-tools.json's expirationDate and what the API token endpoints answer), with or
// without fractional seconds, or a plain YYYY-MM-DD (midnight UTC).
func parseExpiration(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Time{}, errors.New("not an RFC 3339 date-time or YYYY-MM-DD")
}

// Expiry returns when the credentials in use expire, when that can be known: the
// configured TokenExpiration (api.token-expiration, or the expirationDate of a
// clever-tools.json), else, for a bearer token that is a JSON Web Token, its "exp" claim
// (read without verifying the signature: it only feeds a warning). Clever Cloud does not
// document its API tokens' format, so an opaque token without a configured expiry has
// none (ok false).
func (c APIConfig) Expiry() (t time.Time, from string, ok bool) {
	if isSet(c.TokenExpiration) {
		if t, err := parseExpiration(c.TokenExpiration); err == nil {
			return t, ExpiryFromConfig, true
		}
	}
	if c.Mode() == ModeBearer {
		if t, ok := jwtExpiry(c.Bearer()); ok {
			return t, ExpiryFromClaims, true
		}
	}
	return time.Time{}, "", false
}

// jwtExpiry returns the "exp" claim of a compact JWS (header.payload.signature, base64url)
// whose header names an "alg". Anything else is not a JWT: ok false. The token is never
// part of an error or log.
func jwtExpiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	decode := func(s string) ([]byte, bool) {
		b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
		return b, err == nil
	}
	hb, ok := decode(parts[0])
	if !ok {
		return time.Time{}, false
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(hb, &header) != nil || header.Alg == "" {
		return time.Time{}, false
	}
	pb, ok := decode(parts[1])
	if !ok {
		return time.Time{}, false
	}
	var claims struct {
		Exp *float64 `json:"exp"`
	}
	if json.Unmarshal(pb, &claims) != nil || claims.Exp == nil || *claims.Exp <= 0 || *claims.Exp > math.MaxInt32*4 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(*claims.Exp)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), true
}
