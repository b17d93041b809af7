package workloads

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Workload is one load tool.
type Workload interface {
	// Name is the tool's name as used by `dbperf-runner --workload`.
	Name() string
	// DefaultImage is the tool's official image.
	DefaultImage() string
	// Validate re-checks what the schema cannot express.
	Validate(spec *benchv1.WorkloadSpec, path *field.Path) field.ErrorList
	// Steps expands the sweep: one step per combination of list values, in
	// the order they are listed.
	Steps(spec *benchv1.WorkloadSpec) []Step
	// Prepare returns the invocation that loads data before measuring, or
	// nil when the tool needs none. It is not called when the spec says
	// skipPrepare.
	Prepare(spec *benchv1.WorkloadSpec, ep pod.Endpoint) *pod.Invocation
	// Run returns the invocation that measures one step.
	Run(spec *benchv1.WorkloadSpec, ep pod.Endpoint, step Step) pod.Invocation
	Parser
}

// Parser turns a tool's output into a Result. It never returns nil: output
// it cannot read is a Failed result that says why.
type Parser interface {
	Parse(in ParseInput) *results.Result
}

// PrepareParser is implemented by tools whose prepare step can fail with
// exit code 0 (HammerDB's schema build): it returns why the step failed.
type PrepareParser interface {
	ParsePrepare(in ParseInput) []string
}

// ParseInput is what the tool left behind.
type ParseInput struct {
	// Output is the tool's stdout and stderr, interleaved as they were written.
	Output []byte
	// Files holds result files the tool wrote, by base name.
	Files map[string][]byte
	// ExitCode of the tool; nil when unknown (parsing an old log).
	ExitCode *int
	// Config is the parser's configuration (pod.Invocation.ParserConfig, as
	// the runner read it); nil when the invocation has none.
	Config []byte
}

// Step is one value of the sweep.
type Step struct {
	// Name is stable and readable: "clients=20,pipeline=1".
	Name string
	// Params are the swept values by parameter name.
	Params map[string]int32
}

// LibpqTLSEnv is how a libpq client (pgbench, HammerDB's Pgtcl, psql)
// reaches the endpoint over TLS: PGSSLMODE verify-full with the target's CA,
// require without one, prefer without TLS; and the client certificate of
// two-way TLS (PGSSLCERT, PGSSLKEY), which libpq reads from these variables
// when the connection string does not name them.
func LibpqTLSEnv(ep pod.Endpoint) []corev1.EnvVar {
	var env []corev1.EnvVar
	switch {
	case ep.TLS && ep.CASecret != "":
		env = append(env, corev1.EnvVar{Name: "PGSSLMODE", Value: "verify-full"},
			corev1.EnvVar{Name: "PGSSLROOTCERT", Value: pod.CAFile})
	case ep.TLS:
		env = append(env, corev1.EnvVar{Name: "PGSSLMODE", Value: "require"})
	default:
		env = append(env, corev1.EnvVar{Name: "PGSSLMODE", Value: "prefer"})
	}
	if ep.TLS && ep.ClientCertSecret != "" {
		env = append(env, corev1.EnvVar{Name: "PGSSLCERT", Value: pod.ClientCertFile},
			corev1.EnvVar{Name: "PGSSLKEY", Value: pod.ClientKeyFile})
	}
	return env
}

// SampleParser is implemented by tools that write a raw sample stream
// (pod.Invocation.SampleStream): its sink consumes the stream while the tool
// runs, with memory that does not grow with the samples.
type SampleParser interface {
	NewSampleSink(o SampleOptions) SampleSink
}

// SampleSink consumes one sample stream. Line is called for each line, in
// order, from one goroutine; Finish once, after the stream ended and after
// Parse, to add what the samples say to the result.
type SampleSink interface {
	// Line must not keep line: its bytes are reused.
	Line(line []byte)
	Finish(r *results.Result)
}

// ToolAggregator is a SampleParser whose tool can aggregate its samples
// in its own process, with the parser's own code built into it, and hand
// the aggregates over at its end instead of streaming every sample: a
// stream costs a tool near its limit a share of what it can offer.
type ToolAggregator interface {
	SampleParser
	// AggregateInTool returns the tool's command changed to aggregate in
	// the tool, writing to file, instead of streaming to the sample
	// stream; ok is false when this build of the tool cannot (its command
	// is run as it is, with the stream). It may run the tool to ask.
	AggregateInTool(command []string, stream string) (changed []string, file string, ok bool)
	// AggregateEnv is the environment telling the tool the sink's options
	// and when it was started (StartedSink).
	AggregateEnv(o SampleOptions, started time.Time) ([]string, error)
	// LoadAggregate reads what the tool wrote into a sink whose Finish
	// adds it to the result as the stream's sink would.
	LoadAggregate(file string, o SampleOptions) (SampleSink, error)
}

// StartedSink is a SampleSink told when the tool was started (after the
// start barrier, the same instant for every load generator): what a
// sink that cuts the measurement into stages measures them from. It may
// be called while lines are read (another goroutine).
type StartedSink interface {
	Started(t time.Time)
}

// SampleOptions configure a sample sink.
type SampleOptions struct {
	// Resolution of the time series; zero means pod.DefaultSeriesResolution.
	Resolution time.Duration
	// APDEX target times by operation (results.AllOperations for all): the
	// sink records the APDEX counts of each window of APDEXWindow.
	APDEX       map[string]time.Duration
	APDEXWindow time.Duration
	Metrics     []pod.MetricDeclaration
	// Stages cut the measurement into the parts the tool ramps through by
	// itself (pod.Invocation.Stages): each is reported as results' Stages.
	Stages []pod.Stage
}

// Placeholders the runner replaces in a tool's command line when a Job
// runs several load generators: the generator's k6 execution segment
// ("1/4:2/4") and the whole sequence ("0,1/4,2/4,3/4,1").
const (
	SegmentPlaceholder         = "{{dbperf.segment}}"
	SegmentSequencePlaceholder = "{{dbperf.segment-sequence}}"
)

// SharePlaceholder stands for generator index's share of a total its Job's
// load generators split (an offered rate): the runner replaces it with
// Share, so that the generators together offer exactly the total.
func SharePlaceholder(total int64) string { return fmt.Sprintf("{{dbperf.share:%d}}", total) }

// SharePerPlaceholder stands for generator index's share of total divided
// among per senders of its own (a tool whose rate limit is per connection:
// memtier's --rate-limiting): the runner replaces it with SharePer.
func SharePerPlaceholder(total, per int64) string {
	return fmt.Sprintf("{{dbperf.share:%d/%d}}", total, per)
}

// ShareOf matches SharePlaceholder and SharePerPlaceholder; its groups are
// the total and the divisor (empty for none).
var ShareOf = regexp.MustCompile(`\{\{dbperf\.share:([0-9]+)(?:/([0-9]+))?\}\}`)

// SharePer is generator index's share of total (Share) divided among its
// per senders, rounded to the nearest whole number and at least 1: what
// each sender is told to offer. The generator then offers per × SharePer,
// which can differ from its share by up to per/2 (a tool that takes one
// rate for all its senders cannot place a remainder); the tool's result
// says what it offered.
func SharePer(total int64, index, n int, per int64) int64 {
	share := Share(total, index, n)
	if per <= 1 {
		return share
	}
	return max(1, (share+per/2)/per)
}

// Share is generator index's share of total among n generators: the
// remainder goes one each to the first ones, never rounded away.
func Share(total int64, index, n int) int64 {
	share := total / int64(n)
	if int64(index) < total%int64(n) {
		share++
	}
	return share
}

// Segment returns generator index's execution segment of n and the sequence.
func Segment(index, n int) (segment, sequence string) {
	frac := func(i int) string {
		switch i {
		case 0:
			return "0"
		case n:
			return "1"
		}
		return fmt.Sprintf("%d/%d", i, n)
	}
	parts := make([]string, 0, n+1)
	for i := 0; i <= n; i++ {
		parts = append(parts, frac(i))
	}
	return frac(index) + ":" + frac(index+1), strings.Join(parts, ",")
}
