package hybrid

import "github.com/go-logr/logr"

// maxHelmVerbosity caps the Helm reconciler's log verbosity: at V(4) helm-operator-plugins
// prints whole release diffs (the rendered Secret, credentials included) to stdout.
const maxHelmVerbosity = 3

// cappedLogger returns l with every level above max disabled.
func cappedLogger(l logr.Logger, max int) logr.Logger {
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
