package workloads

import (
	"fmt"
	"syscall"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// The rules every parser applies the same way, so that a verdict means the
// same thing whichever tool measured.

// JudgeExitCode fails r when the tool exited non-zero. A summary printed
// before a crash or an abort (exit 134 after glibc's "alloc: invalid block")
// is not a measurement to trust. A nil code (parsing an old log) says
// nothing; a known one is kept in the result.
func JudgeExitCode(r *results.Result, tool string, code *int) {
	if code == nil {
		return
	}
	c := *code
	r.ExitCode = &c
	if c == 0 {
		return
	}
	r.Fail("%s exited with code %d%s", tool, *code, signalNote(*code))
}

// signalNote names the signal of a shell-style exit code above 128.
func signalNote(code int) string {
	if code <= 128 || code >= 128+65 {
		return ""
	}
	return fmt.Sprintf(" (killed by signal %d, %s)", code-128, syscall.Signal(code-128))
}

// AddErrorShare records failed out of total requests (or transactions) as
// errorPercent, the one metric validity.maxErrorPercent judges for every
// tool, so that one error in a million requests means the same for all.
// Nothing is recorded when the total is unknown (zero).
func AddErrorShare(r *results.Result, failed, total float64) {
	if total <= 0 {
		return
	}
	r.Add(results.Metric{Name: "errorPercent", Value: 100 * failed / total, Unit: "%", Direction: results.LowerIsBetter})
}

// RequireWork fails r when the tool completed no operation: a summary of
// zeros (YCSB prints one after every client thread died) measured nothing.
func RequireWork(r *results.Result, done float64, what string) {
	if done <= 0 {
		r.Fail("no %s completed: nothing was measured", what)
	}
}

// RequireSuccess fails r when an errorPercent is 100: no request succeeded,
// so its throughput and latencies describe error replies, not the
// database, whatever validity.maxErrorPercent allows.
func RequireSuccess(r *results.Result) {
	for _, m := range r.Metrics {
		if m.Name != "errorPercent" || m.Value < 100 {
			continue
		}
		of := ""
		if m.Operation != "" {
			of = " of " + m.Operation
		}
		r.Fail("every request%s failed: nothing was measured", of)
	}
}

// PrepareReasons judges a prepare step (schema build, data load) by the
// result of the tool's own parser: whatever would make a measurement
// Failed or Invalid fails it, and so does any failed write, whatever
// validity.maxErrorPercent allows a measurement, since the data every
// measurement then reads is incomplete. Parse it WithoutExitCode: the
// runner judges a prepare step's exit code itself.
func PrepareReasons(r *results.Result) []string {
	if r.Verdict == results.Failed {
		return r.Reasons
	}
	reasons := append([]string(nil), r.Reasons...)
	for _, m := range r.Metrics {
		if m.Name == "errorPercent" && m.Value > 0 {
			reasons = append(reasons, fmt.Sprintf("%.3g%% of the prepare step's writes failed, so the data the measurement reads is incomplete", m.Value))
		}
	}
	return reasons
}

// WithoutExitCode is in without its exit code, as a prepare parser reads it.
func WithoutExitCode(in ParseInput) ParseInput {
	in.ExitCode = nil
	return in
}
