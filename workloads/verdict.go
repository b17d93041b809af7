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
