package pgbench

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

func TestRestartCommandShortensTheTime(t *testing.T) {
	cmd := []string{"pgbench", "--client", "16", "--time", "180", "--progress", "1", "--builtin", "tpcb-like"}
	next, ok := Pgbench{}.RestartCommand(cmd, 62400*time.Millisecond)
	want := []string{"pgbench", "--no-vacuum", "--client", "16", "--time", "118", "--progress", "1", "--builtin", "tpcb-like"}
	if !ok || !slices.Equal(next, want) {
		t.Errorf("restart after 62.4 s of 180: %q %v, want %q", next, ok, want)
	}
	if cmd[4] != "180" {
		t.Errorf("the first command was changed: %q", cmd)
	}
	if next, ok := (Pgbench{}).RestartCommand(next, 62600*time.Millisecond); !ok || strings.Count(strings.Join(next, " "), "--no-vacuum") != 1 {
		t.Errorf("a restarted command restarted again: %q", next)
	}
	if _, ok := (Pgbench{}).RestartCommand(cmd, 179600*time.Millisecond); ok {
		t.Error("a restart with 0.4 s left: pgbench's --time takes whole seconds, at least one")
	}
	if _, ok := (Pgbench{}).RestartCommand([]string{"pgbench", "--transactions", "100"}, time.Second); ok {
		t.Error("a run of a number of transactions has no time to shorten")
	}
}

// Three real runs (testdata/README.md): the counts add up, the averages
// are weighted by each run's transactions, the series is on the first
// run's clock with the first run's last transactions placed up to its end
// and zero from there to the start that connected, and only the last run
// is judged as a run.
func TestParseRestartedRuns(t *testing.T) {
	raw, err := os.ReadFile("testdata/restarted.txt")
	if err != nil {
		t.Fatal(err)
	}
	exit := 0
	r := Pgbench{}.Parse(workloads.ParseInput{Output: raw, ExitCode: &exit})
	t.Logf("verdict %s %q; warnings %q", r.Verdict, r.Reasons, r.Warnings)
	if r.Verdict != results.Succeeded {
		t.Fatalf("restarted and run to its end: %s %q", r.Verdict, r.Reasons)
	}
	get := func(name string) float64 {
		t.Helper()
		m, ok := r.Get(results.Key{Name: name})
		if !ok {
			t.Fatalf("no %s", name)
		}
		return m.Value
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("transactionsProcessed", get("transactionsProcessed"), 328+310)
	// Over the whole time: the last run (from 4.406 s, -T 3) ends at 7.406 s.
	near("transactionsPerSecond", get("transactionsPerSecond"), 638/7.406)
	mean := (328*1.061 + 310*1.128) / 638
	near("latencyAverageMillis", get("latencyAverageMillis"), mean)
	near("latencyStddevMillis", get("latencyStddevMillis"), math.Sqrt((328*(0.486*0.486+1.061*1.061)+310*(0.462*0.462+1.128*1.128))/638-mean*mean))
	near("abortedClients", get("abortedClients"), 2)
	near("errorPercent", get("errorPercent"), 0)
	var end float64
	for _, m := range r.Metrics {
		if m.Name == "statementLatencyMillis" && m.Operation == "END;" {
			end = m.Value
		}
	}
	near("END; latency", end, (328*0.417+310*0.434)/638)
	type pt struct{ at, tps float64 }
	var got []pt
	for _, p := range r.TimeSeries {
		got = append(got, pt{math.Round(p.ElapsedSeconds*1000) / 1000, math.Round(p.Values["transactionsPerSecond"]*1000) / 1000})
	}
	wantPts := []pt{{1, 89}, {2, 102}, {3, 92}, {3.418, math.Round((328-283)/0.418*1000) / 1000}, {4.406, 0}, {5.406, 105}, {6.406, 93}}
	if !slices.Equal(got, wantPts) {
		t.Errorf("series %v, want %v", got, wantPts)
	}

	// The last run gave up too: the measurement failed, saying so.
	exit = 2
	cut := raw[:strings.LastIndex(string(raw), "[dbperf-runner] tool restarted")]
	r = Pgbench{}.Parse(workloads.ParseInput{Output: cut, ExitCode: &exit})
	if r.Verdict != results.Failed || !strings.Contains(strings.Join(r.Reasons, " "), "its last run, started 3.9 s into the measurement") {
		t.Errorf("a last run that found no server: %s %q", r.Verdict, r.Reasons)
	}
	// ... unless no time was left to start another: the target did not
	// come back within the measurement, which its card says.
	over := append(append([]byte(nil), cut...), workloads.TimeOverLine(5600*time.Millisecond)...)
	r = Pgbench{}.Parse(workloads.ParseInput{Output: over, ExitCode: &exit})
	if r.Verdict != results.Succeeded || !strings.Contains(strings.Join(r.Warnings, " "), "still refused it when the tool's time was over") {
		t.Errorf("time over while the target refused the tool: %s %q %q", r.Verdict, r.Reasons, r.Warnings)
	}
	if r.ExitCode == nil || *r.ExitCode != 2 {
		t.Errorf("exit code %v, want the last run's 2", r.ExitCode)
	}
}
