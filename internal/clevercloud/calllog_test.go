package clevercloud

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// logLines captures what the client logs through the context's logger, at verbosity v.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger(v int) logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{Verbosity: v})
}

func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// One line per HTTP attempt, through the request context's logger: method, route template,
// status, attempt; never the URL, ids or credentials. Reads that succeed are V(1); writes and
// failures are info.
func TestCallLogLine(t *testing.T) {
	var gets int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.Method {
		case http.MethodGet:
			gets++
			if gets == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"id":503,"message":"busy"}`))
				return
			}
			_, _ = w.Write([]byte(`{"id":"addon_secret-id-123","region":"par"}`))
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()
	creds := uniqueCreds()
	c := mustClient(t, Config{Endpoint: srv.URL, Credentials: creds})

	for _, tc := range []struct {
		name      string
		verbosity int
		call      func(ctx context.Context) error
		want      []string // substrings, one per line, in order
	}{
		{"a retried read at V(1): the failed attempt and the successful one", 1,
			func(ctx context.Context) error {
				_, err := c.GetAddon(ctx, "orga_owner-1", "addon_secret-id-123")
				return err
			},
			[]string{
				`"level"=0 "msg"="Clever Cloud call" "method"="GET" "route"="/v2/organisations/{ownerId}/addons/{addonId}" "status"=503`,
				`"level"=1 "msg"="Clever Cloud call" "method"="GET" "route"="/v2/organisations/{ownerId}/addons/{addonId}" "status"=200`,
			}},
		{"a delete at info", 0,
			func(ctx context.Context) error { return c.DeleteAddon(ctx, "orga_owner-1", "addon_secret-id-123") },
			[]string{`"level"=0 "msg"="Clever Cloud call" "method"="DELETE" "route"="/v2/organisations/{ownerId}/addons/{addonId}" "status"=204`}},
		{"a successful read is not logged at info", 0,
			func(ctx context.Context) error {
				_, err := c.GetAddon(ctx, "orga_owner-1", "addon_secret-id-123")
				return err
			},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l logLines
			ctx := logr.NewContext(context.Background(), l.logger(tc.verbosity))
			if err := tc.call(ctx); err != nil {
				t.Fatalf("call: %v", err)
			}
			got := l.all()
			if len(got) != len(tc.want) {
				t.Fatalf("logged %d lines, want %d: %q", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("line %d = %s\nwant it to contain %s", i, got[i], w)
				}
				if !strings.Contains(got[i], `"attempt"=`) || !strings.Contains(got[i], `"durationMs"=`) {
					t.Errorf("line %d lacks attempt or duration: %s", i, got[i])
				}
			}
			for _, line := range got {
				for _, secret := range []string{"addon_secret-id-123", "orga_owner-1", srv.URL, creds.Token, creds.Secret, creds.ConsumerSecret} {
					if strings.Contains(line, secret) {
						t.Errorf("line %s contains %q", line, secret)
					}
				}
			}
			if strings.Contains(tc.name, "retried") && !strings.Contains(got[1], `"attempt"=2`) {
				t.Errorf("second attempt not numbered 2: %s", got[1])
			}
		})
	}

	t.Run("no answer: status 0 and what failed", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		url := dead.URL
		dead.Close()
		c := mustClient(t, Config{Endpoint: url, MaxRetries: -1})
		var l logLines
		ctx := logr.NewContext(context.Background(), l.logger(0))
		if _, err := c.Self(ctx); err == nil {
			t.Fatal("call to a closed server succeeded")
		}
		got := l.all()
		if len(got) != 1 || !strings.Contains(got[0], `"route"="/v2/self" "status"=0`) || !strings.Contains(got[0], `"failure"="sending request"`) {
			t.Fatalf("lines = %q", got)
		}
		if strings.Contains(got[0], url) {
			t.Errorf("line names the URL: %s", got[0])
		}
	})
}
