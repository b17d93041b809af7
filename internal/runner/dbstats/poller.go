package dbstats

import (
	"context"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Reading is what one poll saw. Counters only grow while the server lives;
// gauges are levels at the instant of the poll.
type Reading struct {
	// Epoch names the server's life and its statistics' (a start time, a
	// run id, a statistics reset time): when it changes between two polls,
	// every counter started again. Empty when the server has none; a counter
	// that went down says the same.
	Epoch string
	// Epochs gives a counter that restarts on its own schedule its own
	// epoch, which it goes by instead of Epoch: PostgreSQL's shared
	// statistics (WAL, checkpoints), which pg_stat_reset() leaves alone and
	// pg_stat_reset_shared() resets by themselves; a log position, which a
	// restart does not take back to zero. Nil for most readings.
	Epochs   map[string]string
	Counters map[string]float64
	Gauges   map[string]float64
}

// Poller reads one database server's statistics.
type Poller interface {
	// Source names the statistics, such as "postgresql".
	Source() string
	// Poll reads the statistics once, with one short statement.
	Poll(ctx context.Context) (Reading, error)
	// Figures says how the readings become figures.
	Figures() []Def
	Close() error
}

// Noter is a Poller with something to say about its figures as a whole,
// such as a view the server's version lacks and the figures left out for
// it. Each note becomes one warning of the window's report.
type Noter interface {
	Notes() []string
}

// Settler is a Poller whose server publishes what its sessions did a
// moment after they did it: Settle waits, bounded, until the tool's
// sessions have published before the window's last poll.
type Settler interface {
	Settle(ctx context.Context)
}

// windowEdgeKey marks the context of a window's first and last polls.
type windowEdgeKey struct{}

// atWindowEdge marks ctx as that of a window's first or last poll.
func atWindowEdge(ctx context.Context) context.Context {
	return context.WithValue(ctx, windowEdgeKey{}, true)
}

// isWindowEdge says whether a poll is a window's first or last: a poller
// reads then what is too costly to read at every poll.
func isWindowEdge(ctx context.Context) bool {
	edge, _ := ctx.Value(windowEdgeKey{}).(bool)
	return edge
}

// Kind is how a figure is derived from the readings.
type Kind int

const (
	// PerSecond is a counter's increase over the window per second of it,
	// times Scale; its series is the rate of each poll interval.
	PerSecond Kind = iota
	// Count is a counter's increase over the window (deadlocks, evictions).
	Count
	// Percent is 100·ΔKey/(ΔKey+ΔOther) over the window: a hit ratio.
	Percent
	// Gauge gives two figures, Name+"Mean" and Name+"Max", over the polls,
	// and its series is the gauge at each poll.
	Gauge
)

// Def defines one figure (two for a Gauge) of a poller's readings.
type Def struct {
	Name string
	Kind Kind
	// Key is the counter or gauge read; Other is Percent's complement.
	Key, Other string
	Unit       string
	// Scale multiplies a PerSecond rate (0 means 1).
	Scale float64
	// OwnPerPoll is what one poll adds to the counter itself (the poller's
	// own statement or transaction), taken off each interval.
	OwnPerPoll float64
	Direction  results.Direction
}
