package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// CleverToolsFileName is the name of clever-tools' login file
// (~/.config/clever-cloud/clever-tools.json), and the key a Secret made with
// `kubectl create secret generic … --from-file=$HOME/.config/clever-cloud/clever-tools.json`
// holds it under.
const CleverToolsFileName = "clever-tools.json"

// cleverToolsProfile is one profile of clever-tools 4's login file (clever-tools
// src/config/config.js ProfileSchema: alias, token, secret, expirationDate?, userId?,
// email?, overrides?{API_HOST, CONSOLE_URL, AUTH_BRIDGE_HOST, SSH_GATEWAY,
// OAUTH_CONSUMER_KEY, OAUTH_CONSUMER_SECRET}).
type cleverToolsProfile struct {
	Alias          string `json:"alias"`
	Token          string `json:"token"`
	Secret         string `json:"secret"`
	ExpirationDate string `json:"expirationDate"`
	Overrides      *struct {
		APIHost             string `json:"API_HOST"`
		AuthBridgeHost      string `json:"AUTH_BRIDGE_HOST"`
		OAuthConsumerKey    string `json:"OAUTH_CONSUMER_KEY"`
		OAuthConsumerSecret string `json:"OAUTH_CONSUMER_SECRET"`
	} `json:"overrides"`
}

// cleverToolsFile is clever-tools' login file in either of its shapes: clever-tools 4's
// {version: 1, profiles: [...]} (ConfigFileSchema), or the older flat
// {token, secret, expirationDate?} (LegacyConfigFileSchema).
type cleverToolsFile struct {
	Version  *int                 `json:"version"`
	Profiles []cleverToolsProfile `json:"profiles"`
	cleverToolsProfile
}

// ParseCleverTools reads clever-tools' login file (clever-tools.json) and returns the
// credentials of its active profile as an APIConfig:
//
//   - clever-tools 4 ({"version": 1, "profiles": [...]}): the active profile is the FIRST
//     of the list (clever-tools saveProfile puts the active one first and loadConfig uses
//     profiles[0]; no field marks it). Its overrides API_HOST, AUTH_BRIDGE_HOST,
//     OAUTH_CONSUMER_KEY and OAUTH_CONSUMER_SECRET become api.endpoint,
//     api.bridge-endpoint, api.consumer-key and api.consumer-secret;
//   - older clever-tools ({"token", "secret", "expirationDate"?}).
//
// The consumer pair is clever-tools' published one unless the profile overrides it (the
// tokens of `clever login` belong to that consumer), and expirationDate becomes
// api.token-expiration. Errors never contain any part of the file.
func ParseCleverTools(b []byte) (APIConfig, error) {
	b = bytes.TrimPrefix(b, utf8BOM)
	var f cleverToolsFile
	if err := json.Unmarshal(b, &f); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(b, se.Offset)
			return APIConfig{}, fmt.Errorf("%s: %w", CleverToolsFileName, &syntaxError{format: formatJSON, line: line, col: col})
		}
		return APIConfig{}, fmt.Errorf("%s: not clever-tools' login file (want {\"version\": 1, \"profiles\": [...]} or {\"token\", \"secret\"})", CleverToolsFileName)
	}
	p := f.cleverToolsProfile
	what := "its token and secret"
	if f.Version != nil || f.Profiles != nil {
		if len(f.Profiles) == 0 {
			return APIConfig{}, fmt.Errorf("%s has no profile: log in with `clever login` first", CleverToolsFileName)
		}
		p = f.Profiles[0]
		what = "its first (active) profile's token and secret"
	}
	if strings.TrimSpace(p.Token) == "" || strings.TrimSpace(p.Secret) == "" {
		return APIConfig{}, fmt.Errorf("%s: missing %s", CleverToolsFileName, what)
	}
	api := APIConfig{
		Token:           p.Token,
		Secret:          p.Secret,
		ConsumerKey:     CleverToolsConsumerKey,
		ConsumerSecret:  CleverToolsConsumerSecret,
		TokenExpiration: p.ExpirationDate,
	}
	if o := p.Overrides; o != nil {
		api.Endpoint = o.APIHost
		api.BridgeEndpoint = o.AuthBridgeHost
		if isSet(o.OAuthConsumerKey) || isSet(o.OAuthConsumerSecret) {
			api.ConsumerKey, api.ConsumerSecret = o.OAuthConsumerKey, o.OAuthConsumerSecret
		}
	}
	return api.normalized(), nil
}

// ParseOverrideSecret reads a per-namespace override Secret's data: the `config` key (a
// configuration document, see ParseDocument) and/or the `clever-tools.json` key (clever-tools'
// login file, see ParseCleverTools), the document's values winning over the login file's
// when both are present. It returns which keys were used (for messages) and an error
// naming the key at fault; no error contains any part of the data.
func ParseOverrideSecret(data map[string][]byte, configKey string) (APIConfig, error) {
	doc, hasDoc := data[configKey]
	ct, hasCT := data[CleverToolsFileName]
	var api APIConfig
	switch {
	case !hasDoc && !hasCT:
		return APIConfig{}, fmt.Errorf("has no key %q or %q", configKey, CleverToolsFileName)
	case hasCT:
		var err error
		if api, err = ParseCleverTools(ct); err != nil {
			return APIConfig{}, fmt.Errorf("key %q: %w", CleverToolsFileName, err)
		}
	}
	if hasDoc {
		over, err := ParseDocument(doc)
		if err != nil {
			return APIConfig{}, fmt.Errorf("key %q: %w", configKey, err)
		}
		api = Merge(api, over)
	}
	return api, nil
}

// LoadCleverToolsFile reads a clever-tools login file (the --clever-tools-config path).
func LoadCleverToolsFile(path string) (APIConfig, error) {
	b, err := readFile(path)
	if err != nil {
		return APIConfig{}, err
	}
	api, err := ParseCleverTools(b)
	if err != nil {
		return APIConfig{}, fmt.Errorf("clever-tools login file %q: %w", path, err)
	}
	return api, nil
}
