package main

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/query"
	"github.com/dbperf-io/dbperf-operator/workloads/query/ssbgen"
)

// Agreement of the client's time of a run with the server's own
// query_duration_ms. The client's includes the HTTP request and the
// transfer of the result, and the server's is rounded down to whole
// milliseconds, so the client's may be above by a little and below by
// under a millisecond. On a machine shared with other work a run now and
// then waits for a CPU on the client's side: in CI, with other packages'
// tests on the 2 cores, up to 48 ms and a third of the runs past the
// bound. That wait only ever adds, so each query's best run (of 3) shows
// the client's systematic difference: it must be within the bound for
// every query, and no run may be faster than the server.
const (
	queryLogSlackMillis = 5.0 // each query's best run: client − server ≤ max(5 ms, 20% of the server's time)
	queryLogSlackShare  = 0.20
)

// TestRealClickHouseSSB prepares SSB's tables at a tiny scale in Debian's
// clickhouse-server through the workload's own prepare step (its schema
// script and a gzip-compressed CSV of each table downloaded from a local
// HTTP server), times SSB's 13 queries three times each and a query with
// a syntax error through the runner's query subcommand, and checks the
// parsed result against the server's own system.query_log.
func TestRealClickHouseSSB(t *testing.T) {
	ch := testutil.StartClickHouse(t)
	data := ssbgen.Generate(1, ssbgen.Tiny)
	srv := serveSSB(t, data)
	var loads []benchv1.QueryLoad
	for _, table := range ssbgen.Tables {
		loads = append(loads, benchv1.QueryLoad{Table: tableName(table), URL: srv.URL + "/" + table + ".csv.gz"})
	}
	spec := ssbSpec(benchv1.QueryDriverClickHouse, example(t, "ssb-clickhouse-schema.sql"), loads, 3)
	ep := pod.Endpoint{Host: "127.0.0.1", Port: int32(ch.HTTPPort)}
	credentials(&ep)
	p := &podDirs{dir: t.TempDir(), secrets: map[string]string{"username": ch.User, "password": ch.Password}}
	w := query.Query{}
	if errs := w.Validate(spec, nil); len(errs) > 0 {
		t.Fatalf("the spec is not valid: %v", errs)
	}

	if _, code := p.run(t, *w.Prepare(spec, ep), nil); code != 0 {
		t.Fatalf("the prepare step exited with %d", code)
	}
	for _, table := range ssbgen.Tables {
		got, err := ch.Query("SELECT count() FROM " + tableName(table))
		if err != nil || got != strconv.Itoa(len(data.Rows(table))) {
			t.Fatalf("table %s has %q rows (%v), want %d", table, got, err, len(data.Rows(table)))
		}
	}

	queries := example(t, "ssb-clickhouse.sql") + "\n-- name: QBad\nSELEC count() FROM lineorder_flat;\n"
	in, code := p.run(t, w.Run(spec, ep, w.Steps(spec)[0]), map[string]string{"ssb/queries.sql": queries})
	if code != 0 {
		t.Fatalf("the query subcommand exited with %d", code)
	}
	r := w.Parse(in)
	checkQueries(t, r, ssbQueries, 3)
	checkBadQuery(t, r, 3, 14)
	if rows := testutil.MetricValue(t, r, query.MetricRows, "Q2.1"); rows < 10 {
		t.Errorf("Q2.1 returned %v rows: the tiny SSB data must give it some", rows)
	}
	// A query whose best run disagrees waited for a CPU each time: the
	// queries run again, up to twice, before that counts against them.
	for attempt := 1; ; attempt++ {
		off := checkQueryLog(t, ch, in.Files[query.ResultFileName])
		if len(off) == 0 {
			break
		}
		if attempt == 3 {
			t.Errorf("in 3 attempts the client disagreed with system.query_log: %s", strings.Join(off, "; "))
			break
		}
		t.Logf("attempt %d disagreed (%s): running the queries again", attempt, strings.Join(off, "; "))
		if in, code = p.run(t, w.Run(spec, ep, w.Steps(spec)[0]), map[string]string{"ssb/queries.sql": queries}); code != 0 {
			t.Fatalf("the query subcommand exited with %d", code)
		}
	}
}

// tableName is the generator's table as the schema names it: SSB's date
// dimension is dwdate, "date" being a keyword.
func tableName(table string) string {
	if table == "date" {
		return "dwdate"
	}
	return table
}

// checkBadQuery: a query with a syntax error is counted failed in every
// run, named with the server's message, left out of the geometric mean,
// and invalidates the measurement under maxErrorPercent 0.
func checkBadQuery(t *testing.T, r *results.Result, runs, queries int) {
	t.Helper()
	if got := testutil.MetricValue(t, r, query.MetricFailedRuns, "QBad"); got != float64(runs) {
		t.Errorf("QBad failed %v runs, want %d", got, runs)
	}
	if got := testutil.MetricValue(t, r, query.MetricFailedQueries, ""); got != 1 {
		t.Errorf("failedQueries = %v, want 1", got)
	}
	want := 100 * float64(runs) / float64(runs*queries)
	if got := testutil.MetricValue(t, r, "errorPercent", ""); math.Abs(got-want) > 1e-9 {
		t.Errorf("errorPercent = %v, want %v", got, want)
	}
	warnings := strings.Join(r.Warnings, "\n")
	if !strings.Contains(warnings, "query QBad failed") || !strings.Contains(strings.ToLower(warnings), "syntax error") ||
		!strings.Contains(warnings, "leaves out 1 of") {
		t.Errorf("the warnings do not name QBad with the server's message:\n%s", warnings)
	}
	if _, ok := r.Get(results.Key{Name: query.MetricGeometricMean}); !ok || r.Verdict != results.Succeeded {
		t.Fatalf("no geometric mean, or verdict %s %v", r.Verdict, r.Reasons)
	}
	results.ApplyThresholds(r, results.Thresholds{MaxErrorPercent: 0})
	if r.Verdict != results.Invalid {
		t.Errorf("verdict under maxErrorPercent 0 = %s, want Invalid", r.Verdict)
	}
}

// checkQueryLog compares each successful run's client time with the
// server's query_duration_ms of its query_id, and returns the queries
// whose best run is past the bound.
func checkQueryLog(t *testing.T, ch testutil.ClickHouse, raw []byte) []string {
	t.Helper()
	var rep query.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	server := serverTimes(t, ch, rep)
	var diffs []float64
	var off []string
	within, bestWithin := 0, 0
	for _, q := range rep.Queries {
		best, bestServer := math.Inf(1), 0.0
		for i, run := range q.Runs {
			if run.Failed() {
				continue
			}
			s, ok := server[run.QueryID]
			if !ok {
				t.Errorf("%s run %d: query_id %q is not in system.query_log", q.Name, i+1, run.QueryID)
				continue
			}
			d := run.Millis - s
			diffs = append(diffs, d)
			if d <= math.Max(queryLogSlackMillis, queryLogSlackShare*s) {
				within++
			}
			if d < -1 {
				t.Errorf("%s run %d: the client measured %.3f ms, faster than the server's %v ms", q.Name, i+1, run.Millis, s)
			}
			if d < best {
				best, bestServer = d, s
			}
		}
		if math.IsInf(best, 1) {
			continue
		}
		if best <= math.Max(queryLogSlackMillis, queryLogSlackShare*bestServer) {
			bestWithin++
		} else {
			off = append(off, fmt.Sprintf("%s: its best run is %.3f ms above the server's %v ms, past max(%.0f ms, %.0f%%)", q.Name, best, bestServer,
				queryLogSlackMillis, 100*queryLogSlackShare))
		}
	}
	if len(diffs) != 13*3 {
		t.Fatalf("%d runs compared with system.query_log, want 39", len(diffs))
	}
	sort.Float64s(diffs)
	t.Logf("client − server over %d runs: median %.3f ms, max %.3f ms, min %.3f ms; %d runs and the best run of %d queries within max(%.0f ms, %.0f%%)",
		len(diffs), diffs[len(diffs)/2], diffs[len(diffs)-1], diffs[0], within, bestWithin, queryLogSlackMillis, 100*queryLogSlackShare)
	return off
}

// serverTimes reads every finished query's time from system.query_log. The
// server logs a query after its answer is sent, so the last one may not be
// in the log yet when the client has it: the log is flushed and read again
// until every run of rep is there, for up to 10 s.
func serverTimes(t *testing.T, ch testutil.ClickHouse, rep query.Report) map[string]float64 {
	t.Helper()
	server := map[string]float64{}
	testutil.Eventually(t, 10*time.Second, "every run in system.query_log", func() error {
		if _, err := ch.Query("SYSTEM FLUSH LOGS"); err != nil {
			return err
		}
		out, err := ch.Query("SELECT query_id, query_duration_ms FROM system.query_log WHERE type = 2 AND query_id LIKE 'dbperf-%'")
		if err != nil {
			return err
		}
		for _, line := range strings.Split(out, "\n") {
			id, ms, _ := strings.Cut(line, "\t")
			server[id], _ = strconv.ParseFloat(ms, 64)
		}
		for _, q := range rep.Queries {
			for _, run := range q.Runs {
				if _, ok := server[run.QueryID]; !ok && !run.Failed() {
					return fmt.Errorf("%s is not logged yet", run.QueryID)
				}
			}
		}
		return nil
	})
	return server
}
