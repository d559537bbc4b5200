package clevercloud

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// stuckServer accepts requests and never answers until the test ends.
func stuckServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv, &hits
}

// A circuit keyed by where the credentials come from is shared by every token of that
// source at that host: a new token does not reset it. Attempts left unanswered count.
func TestKeyedCircuitSurvivesANewToken(t *testing.T) {
	srv, hits := stuckServer(t)
	key := "namespace " + t.Name()
	newClient := func(token string) *Client {
		c, err := New(Config{Endpoint: srv.URL, Credentials: Credentials{BearerToken: token}, Timeout: 50 * time.Millisecond,
			MaxRetries: -1, RateLimit: -1, CircuitThreshold: 2, CircuitCooldown: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		c.KeyCircuit(key)
		return c
	}
	ctx := context.Background()
	old := newClient("token-1")
	for i := range 2 {
		if _, err := old.Self(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("attempt %d: %v; want a timeout", i, err)
		}
	}
	if _, err := old.Self(ctx); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("after 2 unanswered attempts: %v; want the circuit open", err)
	}
	minted := newClient("token-2")
	if _, err := minted.Self(ctx); !errors.Is(err, ErrCircuitOpen) || RetryDelay(err) <= 0 {
		t.Fatalf("a new token of the same source: %v; want the open circuit", err)
	}
	if n := hits.Load(); n != 2 {
		t.Fatalf("the endpoint got %d requests, want 2", n)
	}
	// Another source, or the same token unkeyed, has a circuit of its own.
	other, _ := New(Config{Endpoint: srv.URL, Credentials: Credentials{BearerToken: "token-2"}, Timeout: 50 * time.Millisecond, MaxRetries: -1, RateLimit: -1})
	other.KeyCircuit("namespace other-" + t.Name())
	if _, err := other.Self(ctx); errors.Is(err, ErrCircuitOpen) {
		t.Fatal("another source shares the circuit")
	}
}

// The caller's deadline (a pass's) cutting an attempt left unanswered for a second or more
// counts against the circuit; a cancellation does not.
func TestCircuitCountsAttemptsCutByTheCallersDeadline(t *testing.T) {
	srv, _ := stuckServer(t)
	c, err := New(Config{Endpoint: srv.URL, Credentials: Credentials{BearerToken: "deadline-" + t.Name()}, Timeout: time.Minute,
		MaxRetries: -1, RateLimit: -1, CircuitThreshold: 1, CircuitCooldown: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(1100 * time.Millisecond); cancel() }()
	if _, err := c.Self(ctx); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if c.circuit.openFor(time.Now()) > 0 {
		t.Fatal("a cancelled attempt opened the circuit")
	}
	ctx, cancel = context.WithTimeout(context.Background(), 1100*time.Millisecond)
	defer cancel()
	if _, err := c.Self(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	if c.circuit.openFor(time.Now()) == 0 {
		t.Fatal("an attempt unanswered until the caller's deadline did not count")
	}
}

func TestCountsAgainstCircuit(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&RequestError{Op: opSend, Err: context.DeadlineExceeded}, true},
		{&RequestError{Op: opRead, Err: errors.New("unexpected EOF")}, true},
		{&RequestError{Op: opDecode, Err: &decodeError{msg: "bad"}}, false},
		{&APIError{StatusCode: 503}, true},
		{&APIError{StatusCode: 401}, false},
	} {
		if got := countsAgainstCircuit(c.err); got != c.want {
			t.Errorf("%v: %v, want %v", c.err, got, c.want)
		}
	}
}
