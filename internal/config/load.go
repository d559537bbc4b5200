package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxFileSize bounds the size of a configuration file.
const maxFileSize = 1 << 20

// LoadOptions tells Load where to read the configuration from.
type LoadOptions struct {
	// ConfigFile (--config): when set, only this file is read; it must exist and
	// parse. Format from the extension (.toml, .yaml, .yml, .json), sniffed for
	// any other extension or none.
	ConfigFile string
	// SearchPaths is read when ConfigFile is empty, in order, later files
	// overriding earlier ones; missing files are skipped. nil means the default
	// search path (DefaultSearchPaths, with HOME taken from Env); an empty
	// non-nil slice means no file.
	SearchPaths []string
	// Env looks environment variables up; nil means os.Getenv.
	Env func(string) string
	// Flags holds values from command-line flags; its non-empty fields win.
	Flags APIConfig
	// CleverToolsFile (--clever-tools-config, env CLEVER_OPERATOR_CLEVER_TOOLS_CONFIG) is a
	// clever-tools login file (clever-tools.json) read after the configuration files:
	// its active profile's credentials and host overrides, below every environment
	// variable and flag. It must exist and parse. Without it, the content of an
	// environment variable named "clever-tools.json" (envFrom a Secret holding that key) is
	// used, else the first existing file of CleverToolsSearchPaths.
	CleverToolsFile string
	// CleverToolsSearchPaths are read, first existing one only, when neither
	// CleverToolsFile nor CLEVER_OPERATOR_CLEVER_TOOLS_CONFIG is set; missing files are
	// skipped. nil means DefaultCleverToolsPaths; an empty non-nil slice means none.
	CleverToolsSearchPaths []string
}

// DefaultCleverToolsPaths is where the operator's manifests mount an (optional) Secret
// made from clever-tools' login file (key clever-tools.json).
var DefaultCleverToolsPaths = []string{"/etc/clever-operator/clever-tools/" + CleverToolsFileName}

// envAlias is an environment variable other Clever Cloud clients read, accepted as a
// fallback for one of our fields.
type envAlias struct {
	field string
	names []string // in precedence order
	// pair: the alias is used only together with its pair's alias of the same index (as
	// clever-tools reads CLEVER_TOKEN and CLEVER_SECRET only when both are set).
	pair string
}

// envAliases are the names users of Clever Cloud's own clients already have, each below
// our CLEVER_OPERATOR_API_* name for the same field (see the package documentation):
//
//   - CLEVER_TOKEN + CLEVER_SECRET: clever-tools (src/config/config.js, both or neither);
//   - CC_OAUTH_TOKEN + CC_OAUTH_SECRET, CC_CONSUMER_KEY, CC_CONSUMER_SECRET: Clever
//     Cloud's Go client (clevercloud-client-go config.go) and Terraform provider
//     (pkg/provider/impl/provider_configure.go);
//   - CLEVER_API_TOKEN: Go client's bearer token (config.go); CC_API_TOKEN: the name
//     `clever tokens create` tells users to export (tokens.create.command.js);
//   - CLEVER_API_HOST, CLEVER_AUTH_BRIDGE_HOST: prefixed forms of clever-tools' API_HOST and
//     AUTH_BRIDGE_HOST (which clever-tools reads unprefixed; too generic a name to read in a
//     pod, so only the prefixed form is accepted).
var envAliases = []envAlias{
	{field: "Token", names: []string{"CLEVER_TOKEN", "CC_OAUTH_TOKEN"}, pair: "Secret"},
	{field: "Secret", names: []string{"CLEVER_SECRET", "CC_OAUTH_SECRET"}, pair: "Token"},
	{field: "ConsumerKey", names: []string{"CC_CONSUMER_KEY"}},
	{field: "ConsumerSecret", names: []string{"CC_CONSUMER_SECRET"}},
	{field: "BearerToken", names: []string{"CLEVER_API_TOKEN", "CC_API_TOKEN"}},
	{field: "Endpoint", names: []string{"CLEVER_API_HOST"}},
	{field: "BridgeEndpoint", names: []string{"CLEVER_AUTH_BRIDGE_HOST"}},
}

// EnvAliasNames lists every accepted alias environment variable (for documentation).
func EnvAliasNames() []string {
	var out []string
	for _, a := range envAliases {
		out = append(out, a.names...)
	}
	return out
}

// fromAliases returns the values of the alias environment variables and the names used.
func fromAliases(env func(string) string) (APIConfig, []string) {
	var api APIConfig
	var used []string
	pairValue := func(a envAlias, i int) string {
		for _, b := range envAliases {
			if b.field == a.pair && i < len(b.names) {
				return strings.TrimSpace(env(b.names[i]))
			}
		}
		return ""
	}
	for _, a := range envAliases {
		for i, name := range a.names {
			v := strings.TrimSpace(env(name))
			if v == "" || (a.pair != "" && pairValue(a, i) == "") {
				continue
			}
			*fieldByName(a.field).ptr(&api) = v
			used = append(used, name)
			break
		}
	}
	return api, used
}

var searchExtensions = []string{"toml", "yaml", "yml", "json"}

// DefaultSearchPaths returns the configuration files Load reads when no
// --config is given, in merge order (later overrides earlier):
//
//	/usr/share/clever-operator/config.*
//	/etc/clever-operator/config.*
//	$HOME/.config/clever-operator/config.*
//	$HOME/.local/share/clever-operator/config.*
//	./config.*
//
// where * is toml, yaml, yml and json, in that order. The $HOME entries are
// left out when HOME is unset or empty.
func DefaultSearchPaths() []string {
	return defaultSearchPaths(os.Getenv("HOME"))
}

func defaultSearchPaths(home string) []string {
	dirs := []string{"/usr/share/clever-operator", "/etc/clever-operator"}
	if home != "" {
		dirs = append(dirs,
			filepath.Join(home, ".config", "clever-operator"),
			filepath.Join(home, ".local", "share", "clever-operator"))
	}
	dirs = append(dirs, ".")
	var paths []string
	for _, d := range dirs {
		for _, ext := range searchExtensions {
			if d == "." {
				paths = append(paths, "./config."+ext) // keep "./" for readable Sources
			} else {
				paths = append(paths, filepath.Join(d, "config."+ext))
			}
		}
	}
	return paths
}

// Load reads the configuration from files, the environment and flags (see the
// package documentation for the precedence). It does not call Validate, so that
// a --check can report what is missing.
func Load(opts LoadOptions) (Config, error) {
	env := opts.Env
	if env == nil {
		env = os.Getenv
	}
	var cfg Config

	if opts.ConfigFile != "" {
		api, err := loadFile(opts.ConfigFile, true)
		if err != nil {
			return Config{}, err
		}
		cfg.API = Merge(cfg.API, api)
		cfg.Sources = append(cfg.Sources, "file "+opts.ConfigFile)
	} else {
		paths := opts.SearchPaths
		if paths == nil {
			paths = defaultSearchPaths(env("HOME"))
		}
		for _, p := range paths {
			api, err := loadFile(p, false)
			if errors.Is(err, errSkip) {
				continue
			}
			if err != nil {
				return Config{}, err
			}
			cfg.API = Merge(cfg.API, api)
			cfg.Sources = append(cfg.Sources, "file "+p)
		}
	}

	ctFile := opts.CleverToolsFile
	if ctFile == "" {
		ctFile = strings.TrimSpace(env(EnvCleverToolsConfig))
	}
	ctContent := ""
	if ctFile == "" {
		// envFrom of a Secret made with --from-file=clever-tools.json=… gives a variable of
		// that name holding the file (Kubernetes ≥ 1.32 accepts such names; older ones skip
		// the key with an event).
		ctContent = strings.TrimSpace(env(CleverToolsFileName))
	}
	if ctContent != "" {
		api, err := ParseCleverTools([]byte(ctContent))
		if err != nil {
			return Config{}, fmt.Errorf("environment variable %s: %w", CleverToolsFileName, err)
		}
		cfg.API = Merge(cfg.API, api)
		cfg.Sources = append(cfg.Sources, "env "+CleverToolsFileName)
	} else if ctFile == "" {
		search := opts.CleverToolsSearchPaths
		if search == nil {
			search = DefaultCleverToolsPaths
		}
		for _, p := range search {
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				ctFile = p
				break
			}
		}
	}
	if ctFile != "" {
		api, err := LoadCleverToolsFile(ctFile)
		if err != nil {
			return Config{}, err
		}
		cfg.API = Merge(cfg.API, api)
		cfg.Sources = append(cfg.Sources, "clever-tools file "+ctFile)
	}

	if aliases, used := fromAliases(env); len(used) > 0 {
		cfg.API = Merge(cfg.API, aliases)
		cfg.Sources = append(cfg.Sources, "env "+strings.Join(used, ","))
	}

	var fromEnv APIConfig
	for _, f := range fields {
		*f.ptr(&fromEnv) = strings.TrimSpace(env(f.env))
	}
	if !fromEnv.isZero() {
		cfg.API = Merge(cfg.API, fromEnv)
		cfg.Sources = append(cfg.Sources, "env")
	}

	if flags := opts.Flags.normalized(); !flags.isZero() {
		cfg.API = Merge(cfg.API, flags)
		cfg.Sources = append(cfg.Sources, "flags")
	}

	cfg.API = cfg.API.normalized()
	return cfg, nil
}

// Notes returns one-line, secret-free facts about how the configuration will be used,
// for the start-up log and --check: the endpoints requests go to, and whether
// clever-tools' published consumer pair signs the requests.
func (c APIConfig) Notes() []string {
	var notes []string
	switch c.Mode() {
	case ModeOAuth1:
		if _, _, published := c.Consumer(); published {
			notes = append(notes, "OAuth1 token + secret signed with clever-tools' published OAuth consumer (set api.consumer-key and api.consumer-secret to use your own)")
		}
	case ModeBearer:
		if !isSet(c.BridgeEndpoint) && c.RequestEndpoint() != DefaultBridgeEndpoint {
			notes = append(notes, "bearer token sent to api.endpoint "+displayEndpoint(c.RequestEndpoint())+" (not Clever Cloud's public API host; set api.bridge-endpoint if this deployment has a separate bridge)")
		}
	}
	return notes
}

// errSkip: an optional file does not exist (or is not a regular file).
var errSkip = errors.New("skip")

// loadFile reads and parses one file. When required is false, a missing file or
// a directory yields errSkip.
func loadFile(path string, required bool) (APIConfig, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !required {
			return APIConfig{}, errSkip
		}
		return APIConfig{}, fmt.Errorf("config file %q does not exist", path)
	case err != nil:
		return APIConfig{}, fmt.Errorf("config file %q: %w", path, err)
	case !st.Mode().IsRegular():
		if !required {
			return APIConfig{}, errSkip
		}
		return APIConfig{}, fmt.Errorf("config file %q is not a regular file", path)
	}
	b, err := readFile(path)
	if err != nil {
		return APIConfig{}, fmt.Errorf("config %w", err)
	}
	return parseFile(path, b)
}

// readFile reads a file of at most maxFileSize bytes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("file %q does not exist", path)
		}
		return nil, fmt.Errorf("file %q: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("file %q: %w", path, err)
	}
	if len(b) > maxFileSize {
		return nil, fmt.Errorf("file %q is larger than %d bytes", path, maxFileSize)
	}
	return b, nil
}
