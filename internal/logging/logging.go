// Package logging caps log verbosity where libraries would print credentials.
package logging

import "github.com/go-logr/logr"

// MaxHelmVerbosity caps the Helm reconciler's log verbosity: at V(4) helm-operator-plugins
// prints whole release diffs (the rendered Secret, credentials included) to stdout.
const MaxHelmVerbosity = 3

// MaxVerbosity caps the whole operator: client-go logs request and response bodies (Secrets
// included, base64-encoded) at V(8) through the contextual logger.
const MaxVerbosity = 6

// Capped returns l with every level above max disabled.
func Capped(l logr.Logger, max int) logr.Logger {
	if l.GetSink() == nil {
		return l
	}
	return logr.New(&cappedSink{LogSink: l.GetSink(), max: max})
}

type cappedSink struct {
	logr.LogSink
	max int
}

func (c *cappedSink) Enabled(level int) bool { return level <= c.max && c.LogSink.Enabled(level) }

func (c *cappedSink) Info(level int, msg string, kv ...any) {
	if level <= c.max {
		c.LogSink.Info(level, msg, kv...)
	}
}

func (c *cappedSink) WithValues(kv ...any) logr.LogSink {
	return &cappedSink{LogSink: c.LogSink.WithValues(kv...), max: c.max}
}

func (c *cappedSink) WithName(name string) logr.LogSink {
	return &cappedSink{LogSink: c.LogSink.WithName(name), max: c.max}
}
