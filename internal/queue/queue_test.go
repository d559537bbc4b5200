package queue

import (
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	// Registers controller-runtime's work queue metrics (its internal metrics package, which
	// every controller imports through this one), as in the operator: a named queue then runs
	// its unfinished-work loop.
	_ "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// recordingClock is a real clock that records the periods of the tickers asked of it.
type recordingClock struct {
	clock.RealClock
	mu      sync.Mutex
	tickers []time.Duration
}

func (c *recordingClock) NewTicker(d time.Duration) clock.Ticker {
	c.mu.Lock()
	c.tickers = append(c.tickers, d)
	c.mu.Unlock()
	return c.RealClock.NewTicker(d)
}

func (c *recordingClock) periods() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tickers)
}

func TestClockSlowsOnlyFastTickers(t *testing.T) {
	rec := &recordingClock{}
	c := Clock{rec}
	for _, d := range []time.Duration{500 * time.Millisecond, MetricsPeriod, time.Minute} {
		c.NewTicker(d).Stop()
	}
	if got, want := rec.periods(), []time.Duration{MetricsPeriod, MetricsPeriod, time.Minute}; !slices.Equal(got, want) {
		t.Fatalf("ticker periods %v, want %v", got, want)
	}
}

// The queue's own tickers (the unfinished-work gauges' 500 ms, the delaying queue's 10 s
// heartbeat) go through the clock: none is faster than MetricsPeriod.
func TestQueueTickersGoThroughTheClock(t *testing.T) {
	rec := &recordingClock{}
	q := newQueue("queue-test", workqueue.DefaultTypedControllerRateLimiter[string](), rec)
	defer q.ShutDown()
	deadline := time.Now().Add(5 * time.Second)
	for len(rec.periods()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := rec.periods()
	if len(got) < 2 {
		t.Fatalf("the queue asked the clock for %d tickers (%v), want the heartbeat and the unfinished-work loop", len(got), got)
	}
	for _, d := range got {
		if d < MetricsPeriod {
			t.Fatalf("a ticker of %s (all: %v)", d, got)
		}
	}
	// It works as a queue.
	q.Add("a")
	if item, _ := q.Get(); item != "a" {
		t.Fatalf("got %q", item)
	}
	q.Done("a")
}
