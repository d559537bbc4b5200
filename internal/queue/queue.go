// Package queue builds the operator's work queues: client-go's rate-limited queue, with its
// unfinished-work gauges refreshed every MetricsPeriod instead of every 500 ms.
//
// A named client-go work queue starts a goroutine that wakes every 500 ms to set two gauges
// (workqueue_unfinished_work_seconds, workqueue_longest_running_processor_seconds), busy or
// not. The operator has two controllers per kind (the engine's and Helm's) and a few more:
// 34 queues, 68 wake-ups a second on an idle operator, whose timers rarely fall together. On
// the bench's machine such a wake-up costs about 0.2 ms of CPU (a Go program with nothing but
// 34 staggered 500 ms tickers uses 1.6 % of a core; with them at 10 s, and the queues' 34
// 10 s heartbeats, 0.17 %): most of the CPU an idle operator with 1,000 Ready resources used
// (P3's baseline, docs/performance.md).
// Prometheus reads the gauges every 15 s or more, so a 10 s refresh loses nothing anyone sees.
//
// The period comes in through the queue's clock (client-go has no option for it): Clock
// answers as the real clock, except that a ticker is never faster than MetricsPeriod. The
// queue's other ticker, the delaying queue's 10 s heartbeat, is not changed; its timers (when
// a requeued item is due) are not tickers.
package queue

import (
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// MetricsPeriod is how often a queue refreshes its unfinished-work gauges.
const MetricsPeriod = 10 * time.Second

// New is controller-runtime's default queue (controller.Options.NewQueue) with Clock.
func New[T comparable](name string, rl workqueue.TypedRateLimiter[T]) workqueue.TypedRateLimitingInterface[T] {
	return newQueue(name, rl, clock.RealClock{})
}

func newQueue[T comparable](name string, rl workqueue.TypedRateLimiter[T], c clock.WithTicker) workqueue.TypedRateLimitingInterface[T] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[T]{Name: name, Clock: Clock{c}})
}

// Clock is the clock it wraps, except that its tickers tick at most every MetricsPeriod.
type Clock struct{ clock.WithTicker }

// NewTicker returns a ticker of d, or of MetricsPeriod when d is shorter.
func (c Clock) NewTicker(d time.Duration) clock.Ticker {
	return c.WithTicker.NewTicker(max(d, MetricsPeriod))
}
