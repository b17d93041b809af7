package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// alive reports whether a process exists and is not a zombie (a container's
// init may not reap the orphans of a killed shell).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// A tool that prints a fatal error and hangs (memtier 2.1.1 after a refused
// AUTH) is stopped once it makes no progress, with its children: the shell's
// `sleep` would otherwise hold the output pipe and outlive the run.
func TestExecStopsAToolHungAfterAFatalError(t *testing.T) {
	cases := map[string]struct {
		trap       string // the shell's handling of SIGTERM
		grace      string
		atMost     time.Duration
		logSIGKILL bool
	}{
		"it ends on SIGTERM":          {trap: "", grace: "20s", atMost: 8 * time.Second},
		"it ignores SIGTERM: SIGKILL": {trap: "trap '' TERM; ", grace: "1s", atMost: 8 * time.Second, logSIGKILL: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "child.pid")
			script := fmt.Sprintf(`%ssleep 1000 & echo $! > %q; echo 'error: authentication failed [-WRONGPASS invalid username-password pair or user is disabled.]'; wait`, tc.trap, pidFile)
			start := time.Now()
			code, out, r := execRunner(t, "--workload", "memtier", "--timeout", "60s",
				"--no-progress-timeout", "1s", "--kill-grace", tc.grace, "--", "sh", "-c", script)
			if took := time.Since(start); took > tc.atMost {
				t.Errorf("took %s, want at most %s", took, tc.atMost)
			}
			testutil.CheckVerdict(t, r, results.Failed, `the tool was stopped by dbperf-runner: no progress for 1s after the fatal error "error: authentication failed [-WRONGPASS`)
			if code != runner.ExitFailed {
				t.Errorf("exit %d", code)
			}
			if got := strings.Contains(out, "SIGKILL\n"); got != tc.logSIGKILL {
				t.Errorf("SIGKILL in the log: %v, want %v\n%s", got, tc.logSIGKILL, out)
			}
			raw, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
			testutil.Eventually(t, 2*time.Second, "the tool's child is gone", func() error {
				if alive(pid) {
					return fmt.Errorf("pid %d is still running", pid)
				}
				return nil
			})
		})
	}
}

// memtierStatus prints memtier's status line n times, 0.3 s apart, with the
// operations counted so far: ops(i).
func memtierStatus(n int, ops string) string {
	return fmt.Sprintf(`i=1; while [ $i -le %d ]; do printf '[RUN #1 %%d%%%%, %%3d secs]  1 threads: %%11d ops,       0 (avg:       0) ops/sec\r' $((i*10)) $i %s; sleep 0.3; i=$((i+1)); done; echo`, n, ops)
}

// The watchdog never stops a tool that is working, nor one that is quiet
// without having printed a fatal error (pgbench without --progress,
// HammerDB during a timed run).
func TestExecWatchdogLeavesWorkingToolsAlone(t *testing.T) {
	pgbenchOut := filepath.Join(testutil.FixturesDir(t, "pgbench"), "pg14plus-tpcb-scale50-haproxy.txt")
	memtierOut := filepath.Join(testutil.FixturesDir(t, "memtier"), "vc-redis-text-4.txt")
	cases := map[string]struct {
		workload, script string
		flags            []string
	}{
		"quiet for 2s without a fatal error": {
			workload: "pgbench", script: fmt.Sprintf("sleep 2; cat %q", pgbenchOut),
			flags: []string{"--no-progress-timeout", "500ms"},
		},
		"quiet for 2s without a fatal error, default flags": {
			workload: "pgbench", script: fmt.Sprintf("sleep 2; cat %q", pgbenchOut),
		},
		"status lines whose count moves, after a fatal error": {
			workload: "memtier",
			script:   fmt.Sprintf("echo 'error: authentication failed [-WRONGPASS]' >&2; %s; cat %q", memtierStatus(8, "$((i*1000))"), memtierOut),
			flags:    []string{"--no-progress-timeout", "1s"},
		},
		"output every 0.3s under a 1s hard limit": {
			workload: "pgbench",
			script:   fmt.Sprintf("for i in 1 2 3 4 5 6 7 8; do echo \"progress: $i.0 s, 100.0 tps, lat 1.0 ms stddev 0.1, 0 failed\"; sleep 0.3; done; cat %q", pgbenchOut),
			flags:    []string{"--hard-no-progress-timeout", "1s"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"--workload", tc.workload, "--max-cpu-percent", "0", "--timeout", "60s"}, tc.flags...)
			_, out, r := execRunner(t, append(args, "--", "sh", "-c", tc.script)...)
			if strings.Contains(strings.Join(r.Reasons, ";"), "stopped") || strings.Contains(out, "stopping the tool") {
				t.Fatalf("stopped: %v\n%s", r.Reasons, out)
			}
			if r.ExitCode == nil || *r.ExitCode != 0 {
				t.Fatalf("exit code %v, the tool must have run to its end", r.ExitCode)
			}
		})
	}
}

// The hard limit stops a tool that makes no progress whatever it printed,
// including a memtier that only repeats a status line with no new operations.
func TestExecHardNoProgressTimeout(t *testing.T) {
	cases := map[string]struct{ workload, script string }{
		"silent":                        {"pgbench", "sleep 1000"},
		"memtier's status lines, 0 ops": {"memtier", memtierStatus(1000, "0")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, _, r := execRunner(t, "--workload", tc.workload, "--timeout", "60s",
				"--hard-no-progress-timeout", "1s", "--kill-grace", "1s", "--", "sh", "-c", tc.script)
			testutil.CheckVerdict(t, r, results.Failed, "no progress (new output or a result-file change) for 1s")
			if took := time.Since(start); took > 8*time.Second {
				t.Errorf("took %s", took)
			}
		})
	}
}

// The real memtier_benchmark 2.1.1 against a redis-server that refuses its
// password: it prints "error: authentication failed" and never exits.
func TestExecRealMemtierWrongPasswordIsStopped(t *testing.T) {
	memtier := testutil.NeedEnv(t, "MEMTIER")
	rd := testutil.StartRedis(t, "--requirepass", "right-password")
	base := []string{memtier, "-s", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "--threads", "2", "--clients", "2", "--hide-histogram"}

	start := time.Now()
	_, out, r := execRunner(t, append([]string{"--workload", "memtier", "--timeout", "60s", "--no-progress-timeout", "2s", "--kill-grace", "2s",
		"--"}, append(base, "-a", "wrong-password", "--test-time", "60")...)...)
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("took %s: the watchdog must stop it long before its 60 s test time", took)
	}
	testutil.CheckVerdict(t, r, results.Failed, `no progress for 2s after the fatal error "error: authentication failed [-WRONGPASS`)
	if r.ExitCode == nil || *r.ExitCode != 128+15 {
		t.Errorf("exit code %v, want SIGTERM's 143\n%s", r.ExitCode, out)
	}

	// With the right password its status lines count operations: a 1.5 s
	// hard limit does not stop a 3 s run.
	code, out, r := execRunner(t, append([]string{"--workload", "memtier", "--max-cpu-percent", "0", "--hard-no-progress-timeout", "1500ms", "--"},
		append(base, "-a", "right-password", "--test-time", "3")...)...)
	if code != runner.ExitValid {
		t.Fatalf("exit %d %v\n%s", code, r.Reasons, out)
	}
}
