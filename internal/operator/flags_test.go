package operator

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/clever-operator/clever-operator/internal/catalog"
	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/config/configtest"
	"github.com/clever-operator/clever-operator/internal/credentials"
)

// cleanFlagEnv unsets the variables BindFlags takes defaults from.
func cleanFlagEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"POD_NAMESPACE", "POD_NAME", "POD_UID", "WATCH_NAMESPACE", "WATCH_SELECTOR", "LEADER_ELECTION_ID", ClaimKeyEnv} {
		t.Setenv(k, "")
	}
}

// parseFlags is main's command line: BindFlags, Parse, Validate.
func parseFlags(args ...string) (*Options, error) {
	o := &Options{}
	fs := flag.NewFlagSet("clever-operator", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return o, o.Validate()
}

// TestValidate: a flag value that cannot work stops the operator with one line naming the
// flag, whether it came from the command line or from the environment.
func TestValidate(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string
	}{
		{"bad watch selector", nil, []string{"--watch-selector", "shard in a", "--check"}, `--watch-selector "shard in a"`},
		{"bad watch selector from the environment", map[string]string{"WATCH_SELECTOR": "=a"}, []string{"--check"}, `--watch-selector "=a"`},
		{"bad cellar endpoint", nil, []string{"--cellar-endpoint", "cellar.example.com", "--check"}, `--cellar-endpoint must be an http:// or https:// URL with a host and no path, not "cellar.example.com"`},
		{"cellar endpoint with a path", nil, []string{"--cellar-endpoint", "https://s3.example.com/bucket"}, `--cellar-endpoint must be an http:// or https:// URL`},
		{"empty lease name", nil, []string{"--leader-election-id", "", "--check"}, "--leader-election-id must not be empty"},
		{"empty lease name from the environment is the default", map[string]string{"LEADER_ELECTION_ID": ""}, nil, ""},
		{"deletion policy", nil, []string{"--default-deletion-policy", "Retain"}, `--default-deletion-policy must be Delete or Orphan, not "Retain"`},
		{"backup max age", nil, []string{"--backup-max-age", "0s"}, "--backup-max-age must be a positive duration (for example 36h), not 0s"},
		{"on-addon-missing", nil, []string{"--on-addon-missing", "ignore"}, `--on-addon-missing must be recreate or report, not "ignore"`},
		{"defaults", nil, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cleanFlagEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			_, err := parseFlags(c.args...)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("%v: %v, want success", c.args, err)
				}
				return
			}
			configtest.ExpectError(t, err, c.wantErr, c.env)
		})
	}
}

// TestBindFlags: each flag lands in its Options field, in the field's own terms where the
// two differ (0 means off on the command line, the default in Options; "" means no default
// credentials there, the default name here).
func TestBindFlags(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		cleanFlagEnv(t)
		o, err := parseFlags()
		if err != nil {
			t.Fatal(err)
		}
		if o.PriceRefresh != catalog.DefaultPriceRefresh || o.CredentialsExpiryWarning != DefaultCredentialsExpiryWarning ||
			o.DefaultCredentials != credentials.DefaultCredentialsName || o.NoDefaultCredentials || o.SkipCreateDefaultCredentials ||
			o.ClaimKeySecret != (types.NamespacedName{}) || o.Namespaces != nil || o.Selector != nil || o.CellarEndpoint != nil ||
			o.Pod != "" || o.LeaderElectionID != DefaultLeaderElectionID || o.WatchesFile != "watches.yaml" || !o.Metrics.Secure ||
			o.Metrics.BindAddress != ":8443" || o.DefaultDeletionPolicy != "Delete" || o.OnAddonMissing != "recreate" {
			t.Fatalf("defaults: %+v", o)
		}
	})
	t.Run("values", func(t *testing.T) {
		cleanFlagEnv(t)
		o, err := parseFlags("--price-refresh-period", "0", "--credentials-expiry-warning", "-1h", "--default-credentials", "",
			"--create-default-credentials=false", "--claim-key-secret", "ops/key", "--watch-namespace", "a,b", "--watch-selector", "shard=a",
			"--cellar-endpoint", "http://127.0.0.1:9000", "--api-bearer-token", "tok-flag", "--api-bridge-endpoint", "http://bridge",
			"-c", "/etc/op.toml", "--clever-tools-config", "/ct.json", "-t", "--metrics-bind-address", "0", "--leader-elect")
		if err != nil {
			t.Fatal(err)
		}
		if o.PriceRefresh >= 0 || o.CredentialsExpiryWarning >= 0 {
			t.Errorf("0 and less are off (negative in Options): price refresh %s, expiry warning %s", o.PriceRefresh, o.CredentialsExpiryWarning)
		}
		if !o.NoDefaultCredentials || !o.SkipCreateDefaultCredentials {
			t.Errorf("no default credentials %v, skip creating them %v", o.NoDefaultCredentials, o.SkipCreateDefaultCredentials)
		}
		if o.ClaimKeySecret != (types.NamespacedName{Namespace: "ops", Name: "key"}) {
			t.Errorf("claim key secret %v", o.ClaimKeySecret)
		}
		if strings.Join(o.Namespaces, "|") != "a|b" {
			t.Errorf("namespaces %q", o.Namespaces)
		}
		if o.Selector.String() != "shard=a" {
			t.Errorf("selector %q", o.Selector)
		}
		if host, secure := o.CellarEndpoint("c.example.com", "k"); host != "127.0.0.1:9000" || secure {
			t.Errorf("cellar endpoint %s %v", host, secure)
		}
		want := config.LoadOptions{ConfigFile: "/etc/op.toml", CleverToolsFile: "/ct.json", Flags: config.APIConfig{BearerToken: "tok-flag", BridgeEndpoint: "http://bridge"}}
		if o.Config.ConfigFile != want.ConfigFile || o.Config.CleverToolsFile != want.CleverToolsFile || o.Config.Flags != want.Flags {
			t.Errorf("configuration sources %+v, want %+v", o.Config, want)
		}
		if !o.Check || o.Metrics.BindAddress != "0" || !o.LeaderElect {
			t.Errorf("check %v, metrics %q, leader election %v", o.Check, o.Metrics.BindAddress, o.LeaderElect)
		}
	})
	t.Run("a bare claim key secret name is none; durations", func(t *testing.T) {
		cleanFlagEnv(t)
		o, err := parseFlags("--claim-key-secret", "key", "--price-refresh-period", "30m", "--credentials-expiry-warning", "48h", "--create-default-credentials")
		if err != nil {
			t.Fatal(err)
		}
		if o.ClaimKeySecret != (types.NamespacedName{}) || o.PriceRefresh != 30*time.Minute || o.CredentialsExpiryWarning != 48*time.Hour || o.SkipCreateDefaultCredentials {
			t.Errorf("%v %s %s %v", o.ClaimKeySecret, o.PriceRefresh, o.CredentialsExpiryWarning, o.SkipCreateDefaultCredentials)
		}
	})
	t.Run("environment", func(t *testing.T) {
		cleanFlagEnv(t)
		for k, v := range map[string]string{"POD_NAMESPACE": "ops", "POD_NAME": "op-1", "POD_UID": "u-1", "WATCH_NAMESPACE": "x,y", "WATCH_SELECTOR": "shard=b", "LEADER_ELECTION_ID": "lease-b"} {
			t.Setenv(k, v)
		}
		o, err := parseFlags()
		if err != nil {
			t.Fatal(err)
		}
		if o.Pod != "ops/op-1/u-1" || o.ClaimKeySecret != (types.NamespacedName{Namespace: "ops", Name: "clever-operator-claim-key"}) || o.LeaderElectionNamespace != "ops" ||
			strings.Join(o.Namespaces, "|") != "x|y" || o.Selector.String() != "shard=b" || o.LeaderElectionID != "lease-b" {
			t.Errorf("%+v", o)
		}
	})
	t.Run("help shows the defaults", func(t *testing.T) {
		cleanFlagEnv(t)
		var b strings.Builder
		fs := flag.NewFlagSet("clever-operator", flag.ContinueOnError)
		fs.SetOutput(&b)
		new(Options).BindFlags(fs)
		fs.PrintDefaults()
		help := map[string]string{}
		for _, block := range strings.Split(b.String(), "\n  -")[1:] {
			name, _, _ := strings.Cut(block, " ")
			help[strings.TrimSpace(name)] = block
		}
		for name, w := range map[string]string{"price-refresh-period": "(default 6h0m0s)", "credentials-expiry-warning": "(default 168h0m0s)",
			"default-credentials": "(default default)", "create-default-credentials": "(default true)"} {
			if !strings.Contains(help[name], w) {
				t.Errorf("help of --%s lacks %q: %q", name, w, help[name])
			}
		}
	})
}
