package main

import (
	"bytes"
	"fmt"
	"math"
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

// throttle slows the server down without stopping it: for d, its
// processes are stopped (SIGSTOP) for 225 ms out of every 300 ms, which
// leaves about a quarter of its throughput — a dip, not a stall.
func throttle(pg testutil.Postgres, d time.Duration) error {
	for end := time.Now().Add(d); time.Now().Before(end); {
		if err := pg.Pause(225 * time.Millisecond); err != nil {
			return err
		}
		time.Sleep(75 * time.Millisecond)
	}
	return nil
}

// startedChild waits until this process has a child named name (the tool
// the runner executes), so that a disturbance is timed from the tool's
// start rather than from the runner's, which a loaded machine delays.
func startedChild(name string, within time.Duration) error {
	parent := strconv.Itoa(os.Getpid())
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...
			open, closing := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
			if open < 0 || closing < open {
				continue
			}
			f := strings.Fields(string(stat[closing+1:]))
			if string(stat[open+1:closing]) == name && len(f) > 1 && f[1] == parent {
				return nil
			}
		}
	}
	return fmt.Errorf("no %s started within %s", name, within)
}

// TestExecDipIsFlagged: a real pgbench run against the local PostgreSQL,
// throttled to about a quarter of its throughput for 4 s from 4 s after
// pgbench started (a dip must be shorter than half the steady window to be
// below its median), is Invalid past --max-dip 2s, with the moment and the
// depth of the dip (to pgbench's 1 s progress resolution), and not as a
// stall; the same run untouched is not Invalid and has no stall and no
// dip longer than a second (a drift, or a second's dip, of a CPU-bound
// pgbench on a busy machine is real and not what this is about), and
// reports its steady-state throughput after the 1 s warm-up,
// close to pgbench's own figure.
func TestExecDipIsFlagged(t *testing.T) {
	pg := initializedPgbench(t)
	tool := []string{"pgbench", "--client", "2", "--jobs", "1", "--time", "12", "--progress", "1", "--builtin", "select-only"}
	args := append([]string{"--workload", "pgbench", "--max-cpu-percent", "0", "--warmup", "1s", "--max-dip", "2s", "--max-stall", "2s", "--"}, tool...)

	code, out, steady := execRunner(t, args...)
	t.Logf("untouched: verdict %s, warnings %q", steady.Verdict, steady.Warnings)
	if code != runner.ExitValid || steady.Verdict != results.Succeeded {
		t.Fatalf("the untouched run: exit %d, %q %q\n%s", code, steady.Reasons, steady.Warnings, out)
	}
	// A second below half the median is what a busy machine does to a
	// CPU-bound pgbench, and a real dip; two are a false alarm.
	calm, _, _ := results.Analyse(steady, time.Second, results.DefaultStallPercent, results.DefaultDipPercent)
	if len(calm.Stalls) > 0 {
		t.Errorf("the untouched run stalled: %v", calm.Stalls)
	}
	for _, d := range calm.Dips {
		if d.Length() > time.Second {
			// The control run is the machine's noise: a dip there comes
			// from other processes on the cores, and a dip we cause could
			// not be told from it. Nothing of the runner is judged then.
			t.Skipf("the machine is too busy to show a dip (load average %s): the untouched run dipped: %s", loadAverage(), d)
		}
	}
	tps, _ := steady.Get(steady.Primary)
	st, ok := steady.Get(results.Key{Name: "steadyTransactionsPerSecond"})
	t.Logf("pgbench %.0f tx/s, steady state after 1 s %.0f tx/s", tps.Value, st.Value)
	if !ok || math.Abs(st.Value-tps.Value) > 0.25*tps.Value || steady.Headline()[1] != st {
		t.Errorf("steady-state throughput %+v (headline %v): want one beside the primary, within 25 %% of pgbench's %.0f tx/s", st, steady.Headline(), tps.Value)
	}

	throttled := make(chan error, 1)
	go func() {
		if err := startedChild("pgbench", time.Minute); err != nil {
			throttled <- err
			return
		}
		time.Sleep(4 * time.Second)
		throttled <- throttle(pg, 4*time.Second)
	}()
	code, out, dipped := execRunner(t, args...)
	if err := <-throttled; err != nil {
		t.Fatal(err)
	}
	why := strings.Join(dipped.Reasons, "; ")
	t.Logf("throttled: exit %d, verdict %s: %s; warnings %q", code, dipped.Verdict, why, dipped.Warnings)
	if dipped.Verdict != results.Invalid || !strings.Contains(why, "transactionsPerSecond dipped from") || !strings.Contains(why, "longer than validity.maxDip 2s") ||
		strings.Contains(why, "stalled") {
		t.Fatalf("the throttled run is not Invalid for its dip: %s %q %q\n%s", dipped.Verdict, dipped.Reasons, dipped.Warnings, out)
	}
	s, ok, _ := results.Analyse(dipped, time.Second, results.DefaultStallPercent, results.DefaultDipPercent)
	if !ok || len(s.Dips) != 1 {
		t.Fatalf("dips %+v: want one", s.Dips)
	}
	d := s.Dips[0]
	if d.From < 3*time.Second || d.From > 6*time.Second || d.Length() < 3*time.Second || d.Length() > 5*time.Second || d.Mean > 0.5*d.Level {
		t.Errorf("dip %s: want one of 3 to 5 s beginning 3 to 6 s in, below half the median", d)
	}
}

// loadAverage is /proc/loadavg's first three figures, for a skip's message.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
