package k6

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// twentyOperations requests 20 named operations in turn at a fixed arrival
// rate, so that every operation's throughput is set by the schedule and a
// slower operation shows in its own latency only.
const twentyOperations = `import http from 'k6/http';
export const options = { scenarios: { ops: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s',
  duration: '4s', preAllocatedVUs: 20, maxVUs: 40 } } };
export default function () {
  const base = 'http://' + __ENV.DBPERF_TARGET_HOST + ':' + __ENV.DBPERF_TARGET_PORT;
  for (let i = 0; i < 20; i++) {
    const op = 'op' + (i < 10 ? '0' : '') + i;
    http.get(base + '/' + op, { tags: { name: op } });
  }
}`

// slowOps are made 30 % slower in the variant.
var slowOps = []string{"op03", "op09", "op15"}

// The test: a real k6 run of a 20-operation scenario against a
// local HTTP server, 5 repetitions per variant, in which three operations
// are 30 % slower in the variant: the per-operation table of the
// comparison has exactly those three Worse and the rest NoChange or
// Inconclusive; the HTML page, loaded in Chromium, sorts them last by
// their p99 change.
func TestRealK6TwentyOperationsCompared(t *testing.T) {
	testutil.NeedEnv(t, "K6")
	var variant atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// 40 ms, not less: a client waiting for a CPU adds a few
		// milliseconds to some requests, which at 20 ms hid a 30 %
		// change of one operation's median in a loaded CI run.
		d := 40 * time.Millisecond
		if variant.Load() && slices.Contains(slowOps, strings.TrimPrefix(r.URL.Path, "/")) {
			d = 52 * time.Millisecond
		}
		time.Sleep(d)
		fmt.Fprintln(w, "ok")
	}))
	defer srv.Close()
	host, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	ep := pod.Endpoint{Host: host, Port: int32(mustAtoi(t, port))}
	spec := &benchv1.WorkloadSpec{K6: &benchv1.K6Workload{Script: twentyOperations}}
	sides := [2]compare.Side{{Name: "baseline"}, {Name: "slower"}}
	for rep := 0; rep < 10; rep++ { // interleaved: baseline, variant, ...
		v := rep % 2
		variant.Store(v == 1)
		r, out := runReal(t, spec, ep, "")
		if r.Verdict != results.Succeeded {
			t.Fatalf("repetition %d: %s %v\n%s", rep, r.Verdict, r.Reasons, out)
		}
		sides[v].Runs = append(sides[v].Runs, asRun(fmt.Sprintf("%s-%d", sides[v].Name, rep/2), spec, r))
	}
	rep, err := compare.Build(sides[0], sides[1], compare.Options{Criteria: stats.Criteria{MinEffectPercent: 10}})
	if err != nil {
		t.Fatal(err)
	}
	table := rep.OperationTable()
	var worse, other []string
	for _, o := range table {
		// The named operations; k6's whole-run metrics (http_req_duration
		// and its kin, which three slower operations do make slower) are
		// rows of their own, not judged here.
		if o.Overall() || !strings.HasPrefix(o.Operation, "op") {
			continue
		}
		switch o.Verdict() {
		case stats.Worse:
			worse = append(worse, o.Operation)
		case stats.NoChange, stats.Inconclusive:
			other = append(other, o.Operation)
		default:
			t.Errorf("%s: %s", o.Operation, o.Verdict())
		}
	}
	slices.Sort(worse)
	if !slices.Equal(worse, slowOps) || len(other) != 17 {
		var md strings.Builder
		_ = compare.Render(&md, rep, "markdown")
		t.Errorf("Worse: %v (want %v), NoChange or Inconclusive: %d (want 17)\n%s", worse, slowOps, len(other), md.String())
	}
	// The summary leads with exactly those 3, each once with its Δ.
	if s := rep.Summary; s == nil || len(s.Worse) < 3 {
		t.Errorf("summary %+v", s)
	} else {
		var first []string
		for _, f := range s.Worse[:3] {
			first = append(first, f.Operation)
		}
		slices.Sort(first)
		if !slices.Equal(first, slowOps) || s.Verdict != compare.OverallRegression {
			t.Errorf("the summary leads with %v (%s), want %v:\n%s", first, s.Verdict, slowOps, strings.Join(s.Lines, "\n"))
		}
		t.Logf("summary:\n%s", strings.Join(s.Lines, "\n"))
	}
	for _, o := range table {
		if slices.Contains(slowOps, o.Operation) {
			p99 := o.Cells[3]
			t.Logf("%s: p99 %.1f → %.1f ms, Δ %+.1f %% (%s)", o.Operation, p99.Baseline.Median, p99.Candidate.Median, float64(p99.DeltaPercent), p99.Verdict)
		}
	}
	// Each slowed operation's latency over time, one measurement each:
	// the candidate's line above the baseline's on average.
	seriesOf := map[string]bool{}
	for _, d := range rep.Distributions {
		if d.SeriesName == "" {
			continue
		}
		mean := func(pts []compare.Point) float64 {
			var sum float64
			for _, p := range pts {
				sum += p[1]
			}
			return sum / float64(len(pts))
		}
		b, c := mean(d.BaselineSeries), mean(d.CandidateSeries)
		t.Logf("%s over time: %s %.1f → %.1f ms on average (%d and %d points)", d.Operation, d.SeriesName, b, c, len(d.BaselineSeries), len(d.CandidateSeries))
		if slices.Contains(slowOps, d.Operation) && c > b {
			seriesOf[d.Operation] = true
		}
	}
	if len(seriesOf) != len(slowOps) {
		t.Errorf("the slowed operations with a slower series over time: %v, want %v", seriesOf, slowOps)
	}
	checkInChromium(t, rep)
}

// asRun is what a comparison knows of a run of one measurement: its status
// (the headline) and its full result.
func asRun(name string, spec *benchv1.WorkloadSpec, r *results.Result) compare.Run {
	var headline []benchv1.MetricValue
	for _, m := range r.Headline() {
		headline = append(headline, benchv1.MetricValue{Name: m.Name, Operation: m.Operation, Value: m.Value, Unit: m.Unit, Direction: m.Direction})
	}
	step := K6{}.Steps(spec)[0].Name
	return compare.Run{Name: name, Spec: benchv1.BenchmarkRunSpec{Workload: *spec},
		Steps: []benchv1.StepStatus{{Name: step, Summary: []benchv1.MetricSummary{{Name: r.Primary.Name, Operation: r.Primary.Operation}},
			Repetitions: []benchv1.RepetitionStatus{{Index: 1, Verdict: benchv1.VerdictSucceeded, Metrics: headline}}}},
		Measurements: []compare.Measurement{{Step: step, Repetition: 1, Result: r}}}
}

// checkInChromium loads the report in headless Chromium with the
// per-operation table sorted by the median latency change (#sort=5, ascending): the
// page's script ran, and the three slower operations are its last rows.
func checkInChromium(t *testing.T, rep *compare.Report) {
	dom := testutil.ChromiumDOM(t, "#sort=5", "k6-twenty-operations.png", func(f *os.File) error { return compare.RenderHTML(f, []*compare.Report{rep}) })
	if dom == "" {
		return
	}
	for _, op := range slowOps {
		if !strings.Contains(dom, `<svg class="chart half opseries"`) || !regexp.MustCompile(`class="ct">latencyP\d+Millis of `+op+` at `).MatchString(dom) {
			t.Errorf("no chart of %s over time in the page Chromium rendered", op)
		}
	}
	start := strings.Index(dom, `<table class="sortable ops">`)
	if start < 0 {
		t.Fatalf("no per-operation table in the page Chromium rendered")
	}
	row := regexp.MustCompile(`<tr class="([a-z ]+)"><td>[^<]*</td><td>(op[0-9]+)</td>`)
	// Every operation is on the page: the first table, and the folded rest.
	if named := len(row.FindAllStringSubmatch(dom[start:], -1)); named != 20 {
		t.Fatalf("%d of the 20 operations in the rendered tables", named)
	}
	table, _, _ := strings.Cut(dom[start:], "</table>")
	rows := row.FindAllStringSubmatch(table, -1)
	if len(rows) < 3 {
		t.Fatalf("%d operations in the first table", len(rows))
	}
	var last []string
	for _, r := range rows[len(rows)-3:] {
		if r[1] != "worse" {
			t.Errorf("row %s is %q, want worse", r[2], r[1])
		}
		last = append(last, r[2])
	}
	slices.Sort(last)
	if !slices.Equal(last, slowOps) {
		t.Errorf("sorted by the median latency change, the last rows are %v, want %v: the page's sorting did not run", last, slowOps)
	}
}
