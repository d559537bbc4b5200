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
	f, err := os.Open(path)
	if err != nil {
		return APIConfig{}, fmt.Errorf("config file %q: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return APIConfig{}, fmt.Errorf("config file %q: %w", path, err)
	}
	if len(b) > maxFileSize {
		return APIConfig{}, fmt.Errorf("config file %q is larger than %d bytes", path, maxFileSize)
	}
	return parseFile(path, b)
}
