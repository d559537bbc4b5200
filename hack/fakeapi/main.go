// Command fakeapi runs the fake Clever Cloud API (pkg/fakeapi) as a
// standalone server for local runs, demos and end-to-end tests.
//
//	go run ./hack/fakeapi --listen 127.0.0.1:8085 --bridge-listen 127.0.0.1:8086
//
// The API host (--listen) accepts OAuth1 only, like api.clever-cloud.com; the
// bridge host (--bridge-listen) accepts bearer API tokens only, like
// api-bridge.clever-cloud.com. Both serve the same state.
//
// See docs/fake-api.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// Demo credentials accepted by default. They are not secrets: anyone can read
// them here and in docs/fake-api.md.
const (
	defaultConsumerKey    = "fake-consumer-key"
	defaultConsumerSecret = "fake-consumer-secret"
	defaultToken          = "fake-token"
	defaultSecret         = "fake-secret"
	defaultBearerToken    = "fake-api-token"
)

// listFlag is a repeatable, comma-separated string flag whose default is
// dropped on first use.
type listFlag struct {
	values []string
	set    bool
}

func (l *listFlag) String() string { return strings.Join(l.values, ",") }

func (l *listFlag) Set(v string) error {
	if !l.set {
		l.values, l.set = nil, true
	}
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			l.values = append(l.values, item)
		}
	}
	return nil
}

type config struct {
	listen          string
	readyFile       string
	bridgeListen    string
	bridgeReadyFile string
	organisations   listFlag
	privatePlans    listFlag
	printEnv        bool
	opts            fakeapi.Options
	consumerKey     string
	consumerSecret  string
	token           string
	secret          string
	bearer          listFlag
	errorRate       float64
	logLevel        string
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{bearer: listFlag{values: []string{defaultBearerToken}}}
	fs := flag.NewFlagSet("fakeapi", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8085", "address to listen on (port 0 picks a free port)")
	fs.StringVar(&c.readyFile, "ready-file", "", "write the actual listen address to this file once listening")
	fs.StringVar(&c.bridgeListen, "bridge-listen", "", "address of the API bridge host, which alone accepts bearer tokens (\"\" = no bridge host)")
	fs.StringVar(&c.bridgeReadyFile, "bridge-ready-file", "", "write the actual bridge listen address to this file once listening")
	fs.BoolVar(&c.opts.BearerOnAPIHost, "bearer-on-api-host", false, "also accept bearer tokens on the API host (the real API does not)")
	fs.BoolVar(&c.opts.LegacyOperatorEnv, "legacy-operator-env", false, "serve the old v2 env of Keycloak, Metabase, Matomo and Otoroshi (today's API serves their data at v4 only)")
	fs.BoolVar(&c.opts.DeleteDuringProvisioning, "delete-during-provisioning", false, "accept deletes during --provisioning-delay (the real platform refuses them)")
	fs.DurationVar(&c.opts.CreateDelay, "create-delay", 0, "POST create waits this long before answering (the add-on exists from the start)")
	fs.Var(&c.organisations, "organisation", "organisation id listed by GET /v2/organisations (repeatable or comma-separated)")
	fs.Var(&c.privatePlans, "private-plan", "owner:providerId:slug, a plan private to owner, listed with ?orgaId=owner (repeatable)")
	fs.BoolVar(&c.printEnv, "print-env", false, "print export lines for the operator (endpoint + demo credentials) and exit")
	fs.Int64Var(&c.opts.Seed, "seed", 0, "deterministic ids and credentials when non-zero")
	fs.DurationVar(&c.opts.ProvisioningDelay, "provisioning-delay", 0, "env of a new add-on reads as [], and its DELETE answers 409, during this delay")
	fs.DurationVar(&c.opts.MigrationDuration, "migration-duration", fakeapi.DefaultMigrationDuration, "how long an add-on migration stays RUNNING before it ends OK")
	fs.DurationVar(&c.opts.Faults.Latency, "latency", 0, "latency added to every API request")
	fs.DurationVar(&c.opts.Faults.Jitter, "jitter", 0, "extra random latency in [0, jitter)")
	fs.Float64Var(&c.errorRate, "error-rate", 0, "probability (0..1) of answering 503 {\"id\":-500} on any API route")
	fs.IntVar(&c.opts.Faults.RateLimitBurst, "rate-limit-burst", 0, "if > 0: max API requests per --rate-limit-window, then 429")
	fs.DurationVar(&c.opts.Faults.RateLimitWindow, "rate-limit-window", time.Second, "sliding window of the rate limit")
	fs.DurationVar(&c.opts.Faults.RetryAfter, "retry-after", 0, "Retry-After sent with 429 (0 = until a slot frees)")
	fs.BoolVar(&c.opts.SkipAuth, "skip-auth", false, "accept requests without checking Authorization")
	fs.StringVar(&c.consumerKey, "consumer-key", defaultConsumerKey, "accepted OAuth1 consumer key (empty, with an empty --consumer-secret: clever-tools' published consumer pair)")
	fs.StringVar(&c.consumerSecret, "consumer-secret", defaultConsumerSecret, "accepted OAuth1 consumer secret")
	fs.StringVar(&c.token, "token", defaultToken, "accepted OAuth1 token")
	fs.StringVar(&c.secret, "secret", defaultSecret, "accepted OAuth1 token secret")
	fs.Var(&c.bearer, "bearer-token", "accepted bearer token (repeatable or comma-separated; default "+defaultBearerToken+")")
	fs.DurationVar(&c.opts.MaxClockSkew, "max-clock-skew", 5*time.Minute, "accepted |now - oauth_timestamp|")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "Usage: fakeapi [flags]  (fake Clever Cloud API, see docs/fake-api.md)")
			fs.PrintDefaults()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch {
	case c.errorRate < 0 || c.errorRate > 1:
		return nil, fmt.Errorf("--error-rate must be between 0 and 1, got %g", c.errorRate)
	case c.opts.Faults.RateLimitBurst < 0:
		return nil, errors.New("--rate-limit-burst must not be negative")
	case c.opts.ProvisioningDelay < 0, c.opts.MigrationDuration < 0, c.opts.CreateDelay < 0, c.opts.Faults.Latency < 0, c.opts.Faults.Jitter < 0,
		c.opts.Faults.RateLimitWindow < 0, c.opts.Faults.RetryAfter < 0:
		return nil, errors.New("durations must not be negative")
	case c.opts.MaxClockSkew <= 0:
		return nil, errors.New("--max-clock-skew must be positive")
	}
	if c.errorRate > 0 {
		c.opts.Faults.ErrorRate = map[string]float64{"*": c.errorRate}
	}
	if c.consumerKey != "" || c.token != "" {
		c.opts.Credentials = []fakeapi.Credential{{
			ConsumerKey: c.consumerKey, ConsumerSecret: c.consumerSecret, Token: c.token, Secret: c.secret,
		}}
	}
	c.opts.BearerTokens = c.bearer.values
	for _, id := range c.organisations.values {
		if !strings.HasPrefix(id, "orga_") {
			return nil, fmt.Errorf("--organisation %q: not an orga_ id", id)
		}
	}
	c.opts.Organisations = c.organisations.values
	for _, pp := range c.privatePlans.values {
		if parts := strings.Split(pp, ":"); len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			return nil, fmt.Errorf("--private-plan %q: want owner:providerId:slug", pp)
		}
	}
	return c, nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "fakeapi: %v\n", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runContext(ctx, args, stdout, stderr)
}

// runContext serves until ctx is done.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if c.printEnv {
		return printEnv(stdout, c)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	c.opts.Logger = logger

	fake := fakeapi.New(c.opts)
	for _, pp := range c.privatePlans.values {
		parts := strings.Split(pp, ":")
		id := fake.AddPrivatePlan(parts[0], parts[1], parts[2])
		if id == "" {
			return fmt.Errorf("--private-plan %q: unknown provider %q", pp, parts[1])
		}
		logger.Info("private plan", "owner", parts[0], "provider", parts[1], "slug", parts[2], "planId", id)
	}
	type host struct {
		name, listen, readyFile string
		handler                 http.Handler
	}
	hosts := []host{{"API", c.listen, c.readyFile, fake}}
	if c.bridgeListen != "" {
		hosts = append(hosts, host{"API bridge", c.bridgeListen, c.bridgeReadyFile, fake.BridgeHandler()})
	}
	var servers []*http.Server
	errc := make(chan error, len(hosts))
	closeAll := func() {
		for _, srv := range servers {
			srv.Close()
		}
	}
	for _, h := range hosts {
		ln, err := net.Listen("tcp", h.listen)
		if err != nil {
			closeAll()
			return fmt.Errorf("cannot listen on %s: %v", h.listen, err)
		}
		addr := ln.Addr().String()
		srv := &http.Server{
			Handler:           h.handler,
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		}
		servers = append(servers, srv)
		go func() { errc <- srv.Serve(ln) }()
		if h.readyFile != "" {
			if err := writeFileAtomic(h.readyFile, addr+"\n"); err != nil {
				closeAll()
				return fmt.Errorf("cannot write the ready file of the %s host: %v", h.name, err)
			}
		}
		logger.Info("fake Clever Cloud "+h.name+" host listening", "address", "http://"+addr, "skipAuth", c.opts.SkipAuth,
			"oauthCredentials", len(c.opts.Credentials), "bearerTokens", len(c.opts.BearerTokens), "seed", c.opts.Seed)
	}

	select {
	case err := <-errc:
		closeAll()
		return fmt.Errorf("server stopped: %v", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(sctx); err != nil {
			return fmt.Errorf("shutdown: %v", err)
		}
	}
	return nil
}

func printEnv(w io.Writer, c *config) error {
	host, port, err := net.SplitHostPort(c.listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %v", c.listen, err)
	}
	if port == "0" {
		return errors.New("--print-env needs a fixed port (use --ready-file with port 0)")
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	fmt.Fprintf(w, "export CLEVER_OPERATOR_API_ENDPOINT=%s\n", shellQuote("http://"+net.JoinHostPort(host, port)))
	if c.bridgeListen != "" {
		bhost, bport, err := net.SplitHostPort(c.bridgeListen)
		if err != nil {
			return fmt.Errorf("--bridge-listen %q: %v", c.bridgeListen, err)
		}
		if bport == "0" {
			return errors.New("--print-env needs a fixed bridge port (use --bridge-ready-file with port 0)")
		}
		if bhost == "" || bhost == "0.0.0.0" || bhost == "::" {
			bhost = "127.0.0.1"
		}
		fmt.Fprintf(w, "export CLEVER_OPERATOR_API_BRIDGE_ENDPOINT=%s\n", shellQuote("http://"+net.JoinHostPort(bhost, bport)))
	}
	fmt.Fprintf(w, "export CLEVER_OPERATOR_API_CONSUMER_KEY=%s\n", shellQuote(c.consumerKey))
	fmt.Fprintf(w, "export CLEVER_OPERATOR_API_CONSUMER_SECRET=%s\n", shellQuote(c.consumerSecret))
	fmt.Fprintf(w, "export CLEVER_OPERATOR_API_TOKEN=%s\n", shellQuote(c.token))
	fmt.Fprintf(w, "export CLEVER_OPERATOR_API_SECRET=%s\n", shellQuote(c.secret))
	return nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func writeFileAtomic(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fakeapi-ready-*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
