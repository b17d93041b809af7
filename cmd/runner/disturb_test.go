package main

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/disturb"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// Background SQL sessions against a real PostgreSQL under a real pgbench,
// through `dbperf-runner exec --disturbance`: the sessions take effect at
// their offset and are cancelled at its end; the throughput dips while they
// run and recovers after; the stability checks judge only the steady
// window before them (the dip is no stall of the measurement); and the
// card computed from the result agrees with the figures computed here by
// hand from the raw progress series.
func TestSQLLoadUnderPgbench(t *testing.T) {
	pg := testutil.StartPostgres(t)
	setEnv(t, pg.Env())
	t.Setenv(pod.EnvDisturbUsername, pg.User)
	t.Setenv(pod.EnvDisturbPassword, pg.Password)
	if code, out, _ := execRunner(t, "--workload", "pgbench", "--prepare", "--", "pgbench", "--initialize", "--quiet", "--scale", "1"); code != 0 {
		t.Fatalf("pgbench --initialize: exit %d\n%s", code, out)
	}
	const at, lasts = 5 * time.Second, 5 * time.Second
	load := pod.RunnerDisturbance{Name: "heavy", Kind: "sqlLoad", Offset: at, Duration: lasts, Sessions: 4, Administrator: true,
		Statements: []string{"SELECT sum(hashtext(g::text)) FROM generate_series(1, 400000000) g"},
		Protocol:   pod.ProtocolPostgres, Address: pod.Address{Host: "127.0.0.1", Port: pg.Port}, Database: "postgres"}
	flag, err := json.Marshal(load)
	if err != nil {
		t.Fatal(err)
	}
	_, out, r := execRunner(t, "--workload", "pgbench", "--max-cpu-percent", "0", "--stall-percent", "50", "--max-stall", "1s",
		"--disturbance", string(flag), "--steady-until", at.String(), "--redact-env", pod.EnvDisturbPassword, "--",
		"pgbench", "--client", "2", "--jobs", "1", "--time", "16", "--progress", "1", "--builtin", "select-only")
	if len(r.Disturbances) != 1 {
		t.Fatalf("no disturbance in the result: %+v\n%s", r.Disturbances, out)
	}
	d := r.Disturbances[0]
	t.Logf("disturbance %s; verdict %s %q; warnings %q", mustJSON(t, d), r.Verdict, r.Reasons, r.Warnings)
	if d.SQL == nil || d.SQL.SessionsConnected != 4 || d.SQL.StatementsCancelled < 1 || d.TookEffect == nil || d.Ended == nil {
		t.Fatalf("the sessions did not all connect, take effect and get cancelled: %s", mustJSON(t, d))
	}
	if from := d.TookEffect.Sub(*r.StartTime); from < at || from > at+2*time.Second {
		t.Errorf("took effect %s into the measurement, want within 2 s after %s", from, at)
	}
	if end := d.Ended.Sub(*r.StartTime); end < at+lasts || end > at+lasts+3*time.Second {
		t.Errorf("ended %s into the measurement, want within 3 s after %s", end, at+lasts)
	}
	if r.Verdict != results.Succeeded {
		t.Errorf("the dip invalidated the measurement, though the stability checks judge the steady window only: %s %q", r.Verdict, r.Reasons)
	}
	card, err := disturb.Compute(r, disturb.Window{Name: d.Name, Kind: d.Kind, Requested: *d.Requested, TookEffect: *d.TookEffect, Ended: *d.Ended}, 0)
	if err != nil {
		t.Fatal(err)
	}
	figures := map[string]float64{}
	for _, m := range card.Metrics() {
		figures[m.Name] = m.Value
	}
	t.Logf("card %v, warnings %q", figures, card.Warnings)

	// By hand, from pgbench's progress lines: each point is the
	// throughput of the second that ends at it.
	eff, end := d.TookEffect.Sub(*r.StartTime).Seconds(), d.Ended.Sub(*r.StartTime).Seconds()
	var steadySum, steadyN, lowest, during, duringN float64
	lowest = math.Inf(1)
	for _, p := range r.TimeSeries {
		v, ok := p.Values["transactionsPerSecond"]
		if !ok {
			continue
		}
		switch from := p.ElapsedSeconds - 1; {
		case p.ElapsedSeconds <= eff:
			steadySum, steadyN = steadySum+v, steadyN+1
		case from >= eff && p.ElapsedSeconds <= end:
			during, duringN = during+v, duringN+1
			lowest = math.Min(lowest, v)
		}
	}
	if steadyN < 3 || duringN < 3 {
		t.Fatalf("too few progress points before (%v) or during (%v) the load: %+v", steadyN, duringN, r.TimeSeries)
	}
	steady := steadySum / steadyN
	if mean := during / duringN; mean > 0.9*steady {
		t.Errorf("no dip: %.0f tx/s during the sessions against %.0f before", mean, steady)
	}
	near := func(name string, want, tolerance float64) {
		t.Helper()
		if got, ok := figures[name]; !ok || math.Abs(got-want) > tolerance {
			t.Errorf("%s = %v (present %v), by hand %v ± %v", name, got, ok, want, tolerance)
		}
	}
	near("steadyThroughput", steady, 0.02*steady)
	if _, ok := figures["dipLowestPercent"]; ok {
		// The card's lowest counts every interval from the effect to the
		// recovery: at most the lowest while the sessions ran.
		if got := figures["dipLowestPercent"]; got > 100*lowest/steady+1 {
			t.Errorf("dipLowestPercent %.1f, above the lowest second under load (%.1f %%)", got, 100*lowest/steady)
		}
	} else {
		t.Error("no dipLowestPercent")
	}
	// The recovery by hand: from the end of the load to the first second
	// of a stretch of 3 at 95 % of steady or more (or of 2 that reach the
	// series' end); the whole rest when there is none.
	var after [][2]float64 // {from, tps} of the seconds that end after the load did
	for _, p := range r.TimeSeries {
		if v, ok := p.Values["transactionsPerSecond"]; ok && p.ElapsedSeconds > end {
			after = append(after, [2]float64{p.ElapsedSeconds - 1, v})
		}
	}
	recovery, recovered := -1.0, false
	for i := range after {
		n := 0
		for j := i; j < len(after) && after[j][1] >= 0.95*steady; j++ {
			n++
		}
		if n >= 3 || (n >= 2 && i+n == len(after)) {
			recovery, recovered = math.Max(after[i][0], end)-end, true
			break
		}
	}
	if len(after) > 0 && !recovered {
		recovery = after[len(after)-1][0] + 1 - end
	}
	if !card.Recovered && len(card.Warnings) == 0 || card.Recovered != recovered {
		t.Errorf("card recovered %v (warnings %q), by hand %v", card.Recovered, card.Warnings, recovered)
	}
	near("recoverySeconds", recovery, 0.01)
	if lost := figures["operationsLost"]; lost < 0.1*steady*(end-eff) {
		t.Errorf("operationsLost %.0f: under 10 %% of the %.0f s window at %.0f tx/s", lost, end-eff, steady)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
