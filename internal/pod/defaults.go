package pod

import "time"

// The runner's defaults: what a flag the operator leaves out means. The
// operator renders a flag only when its value differs from zero, so a
// field left at zero gets these (except the thresholds ExecCommand keeps
// as pointers, which the operator always writes). Where the API has a
// default of its own (pollInterval, maxLoadGeneratorCPUPercent), a test
// checks that the CRD says the same.
const (
	// DefaultMaxLoadGeneratorCPUPercent is the load generator's CPU use
	// above which its numbers are not trusted: past it, the tool measured
	// its own saturation as much as the target's.
	DefaultMaxLoadGeneratorCPUPercent = 90
	// DefaultPollInterval between polls of the target's own statistics:
	// the resolution of their series, and few enough statements that the
	// server does not notice them.
	DefaultPollInterval = 5 * time.Second
	// DefaultCPUSampleInterval is how often the runner samples its
	// container's CPU for the peak.
	DefaultCPUSampleInterval = 5 * time.Second
	// DefaultNoProgressTimeout is how long a tool that printed a fatal
	// error may make no progress before it is stopped: long enough to
	// print its summary and exit on its own, short against any run timeout.
	DefaultNoProgressTimeout = 20 * time.Second
	// DefaultKillGrace is how long a stopped tool has between SIGTERM and
	// SIGKILL.
	DefaultKillGrace = 10 * time.Second
	// DefaultBarrierTimeout is how long a load generator waits for the
	// start signal of a parallel measurement.
	DefaultBarrierTimeout = 10 * time.Minute
	// DefaultSeriesResolution and DefaultAPDEXWindow shape the time
	// series built from a sample stream.
	DefaultSeriesResolution = time.Second
	DefaultAPDEXWindow      = time.Minute
	// DefaultGenerators is one load generator per measurement.
	DefaultGenerators = 1
)

// The query engine's defaults, which are the schema's too
// (queryBench.runsPerQuery, queryBench.queryTimeout).
const (
	DefaultRunsPerQuery = 3
	DefaultQueryTimeout = 10 * time.Minute
)
