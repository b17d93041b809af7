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
// A run in which every request failed measured nothing: Failed.
func AddErrorShare(r *results.Result, failed, total float64, what string) {
	if total <= 0 {
		return
	}
	r.Add(results.Metric{Name: "errorPercent", Value: 100 * failed / total, Unit: "%", Direction: results.LowerIsBetter})
	if failed >= total {
		r.Fail("every one of the %.0f %s failed: nothing was measured", total, what)
	}
}
