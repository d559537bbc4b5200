package clevercloud

import (
	"errors"
	"fmt"
	"strings"

	"github.com/clever-operator/clever-operator/internal/config"
)

// clever-tools' published OAuth consumer pair (see config.CleverToolsConsumerKey): a token
// and secret without a consumer pair are signed with it, as clever-tools and
// clevercloud-sdk-rust do.
const (
	CleverToolsConsumerKey    = config.CleverToolsConsumerKey
	CleverToolsConsumerSecret = config.CleverToolsConsumerSecret
)

// Credential modes returned by Credentials.Mode.
const (
	ModeOAuth1 = "oauth1"
	ModeBearer = "bearer"
)

// Credentials authenticate the client against the Clever Cloud API.
//
// Two modes exist (clever-cloud-api.md §4.1, clever-cloud-api-more.md §7.1):
//   - OAuth1: the four OAuth 1.0a values, requests are signed with HMAC-SHA512; Token
//     and Secret alone (ConsumerKey and ConsumerSecret both empty) are signed with
//     clever-tools' published consumer pair;
//   - bearer: an API token sent as "Authorization: Bearer <token>"
//     (through the API bridge). When BearerToken is set the OAuth1 fields are ignored.
//
// Surrounding whitespace (for example the trailing newline of a value written with
// `echo` into a Secret) is ignored everywhere. The values are never logged nor put
// into errors.
type Credentials struct {
	ConsumerKey, ConsumerSecret string // OAuth1 consumer
	Token, Secret               string // OAuth1 access token and token secret
	BearerToken                 string // API token (bearer mode); when set, OAuth1 fields are ignored
}

// normalized returns a copy with surrounding whitespace removed from every field, and
// clever-tools' published consumer pair filled in for a token and secret without one.
func (c Credentials) normalized() Credentials {
	n := Credentials{
		ConsumerKey:    strings.TrimSpace(c.ConsumerKey),
		ConsumerSecret: strings.TrimSpace(c.ConsumerSecret),
		Token:          strings.TrimSpace(c.Token),
		Secret:         strings.TrimSpace(c.Secret),
		BearerToken:    strings.TrimSpace(c.BearerToken),
	}
	if n.BearerToken == "" && n.Token != "" && n.Secret != "" && n.ConsumerKey == "" && n.ConsumerSecret == "" {
		n.ConsumerKey, n.ConsumerSecret = CleverToolsConsumerKey, CleverToolsConsumerSecret
	}
	return n
}

// UsesPublishedConsumer reports whether OAuth1 requests are signed with clever-tools'
// published consumer pair.
func (c Credentials) UsesPublishedConsumer() bool {
	n := c.normalized()
	return n.Mode() == ModeOAuth1 && n.ConsumerKey == CleverToolsConsumerKey && n.ConsumerSecret == CleverToolsConsumerSecret
}

// Mode returns "bearer" when a bearer token is set, "oauth1" when the four OAuth1
// values are set, and "" when no usable credential set is present.
func (c Credentials) Mode() string {
	n := c.normalized()
	switch {
	case n.BearerToken != "":
		return ModeBearer
	case n.ConsumerKey != "" && n.ConsumerSecret != "" && n.Token != "" && n.Secret != "":
		return ModeOAuth1
	default:
		return ""
	}
}

// Validate returns nil when the credentials are usable, otherwise a one-line error
// naming the missing or malformed field(s). It never includes any value.
func (c Credentials) Validate() error {
	n := c.normalized()
	if n.BearerToken != "" {
		if hasControlOrSpace(n.BearerToken) {
			return errors.New("clever cloud credentials: BearerToken contains whitespace or control characters")
		}
		return nil
	}
	fields := []struct{ name, value string }{
		{"ConsumerKey", n.ConsumerKey},
		{"ConsumerSecret", n.ConsumerSecret},
		{"Token", n.Token},
		{"Secret", n.Secret},
	}
	var missing, bad []string
	for _, f := range fields {
		switch {
		case f.value == "":
			missing = append(missing, f.name)
		case hasControl(f.value):
			bad = append(bad, f.name)
		}
	}
	if len(missing) == len(fields) {
		return errors.New("clever cloud credentials: none set (need BearerToken, or Token and Secret, with ConsumerKey and ConsumerSecret or neither)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("clever cloud credentials: OAuth1 credentials incomplete, missing %s", strings.Join(missing, ", "))
	}
	if len(bad) > 0 {
		return fmt.Errorf("clever cloud credentials: %s contain(s) control characters", strings.Join(bad, ", "))
	}
	return nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func hasControlOrSpace(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r <= 0x20 || r == 0x7f })
}

// secretValues returns the credential values that must never appear in an error (the
// published consumer pair is not secret, but hiding it costs nothing).
func (c Credentials) secretValues() []string {
	n := c.normalized()
	return []string{n.ConsumerKey, n.ConsumerSecret, n.Token, n.Secret, n.BearerToken}
}
