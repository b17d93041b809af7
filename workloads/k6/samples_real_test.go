package k6

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// countingServer counts requests per path; /slow sleeps 20 ms, /fail
// answers 500.
type countingServer struct {
	mu   sync.Mutex
	hits map[string]int
}

func (c *countingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.hits[r.URL.Path]++
	c.mu.Unlock()
	switch r.URL.Path {
	case "/slow":
		time.Sleep(20 * time.Millisecond)
	case "/fail":
		w.WriteHeader(http.StatusInternalServerError)
	}
	fmt.Fprintln(w, "ok")
}

const perOperationScript = `import http from 'k6/http';
import { group } from 'k6';
import { Trend, Counter, Rate } from 'k6/metrics';
const cartTime = new Trend('cart_time', true);
const items = new Counter('items_added');
const logins = new Rate('login_success');
const hits = new Rate('cache_hits');
export default function () {
  const base = 'http://' + __ENV.DBPERF_TARGET_HOST + ':' + __ENV.DBPERF_TARGET_PORT;
  http.get(base + '/a', { tags: { name: 'A' } });
  http.get(base + '/slow', { tags: { name: 'Slow' } });
  http.get(base + '/fail', { tags: { name: 'Fail' } });
  group('cart', function () {
    const t0 = Date.now();
    http.get(base + '/b', { tags: { name: 'B' } });
    http.get(base + '/c', { tags: { name: 'C' } });
    cartTime.add(Date.now() - t0, { name: 'cart' });
    items.add(2);
  });
  logins.add(true);
  hits.add(Math.random() < 0.5);
}`

// The real k6 through the runner with its sample stream: per request name,
// the counts are the server's exactly, the latencies are the handlers',
// the errors are where the server failed, the time series adds up to the
// total, and custom metrics get their declared or inferred direction.
func TestRealK6PerOperationMetrics(t *testing.T) {
	srv := &countingServer{hits: map[string]int{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	host, port, _ := strings.Cut(strings.TrimPrefix(ts.URL, "http://"), ":")
	ep := pod.Endpoint{Host: host, Port: int32(mustAtoi(t, port))}
	spec := &benchv1.WorkloadSpec{K6: &benchv1.K6Workload{Script: perOperationScript, VUs: []int32{4},
		Duration: &metav1Duration{Duration: 4 * time.Second},
		Metrics:  []benchv1.K6Metric{{Name: "items_added", Unit: "items", Direction: benchv1.HigherIsBetter}}}}
	r, out := runRealAPDEX(t, spec, ep, "", map[string]time.Duration{"*": 10 * time.Millisecond})
	if len(r.TimeSeries) == 0 {
		t.Fatalf("no time series: %+v\n%s", r, out)
	}
	// /fail answers 500: the measurement is Invalid for its errors only.
	if r.Verdict != results.Invalid || !strings.Contains(strings.Join(r.Reasons, " "), "of Fail failed") {
		t.Errorf("verdict %s %v", r.Verdict, r.Reasons)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for op, path := range map[string]string{"A": "/a", "Slow": "/slow", "Fail": "/fail", "B": "/b", "C": "/c"} {
		if got := testutil.MetricValue(t, r, "requests", op); int(got) != srv.hits[path] || got == 0 {
			t.Errorf("%s: k6 counted %v requests, the server %d", op, got, srv.hits[path])
		}
		p50 := testutil.MetricValue(t, r, "latencyP50Millis", op)
		if op == "Slow" && p50 < 20 || op != "Slow" && p50 >= 5 {
			t.Errorf("%s: p50 %.3f ms (only /slow sleeps 20 ms)", op, p50)
		}
		if r.Histograms[op] == "" {
			t.Errorf("%s: no histogram", op)
		}
		wantErr := 0.0
		if op == "Fail" {
			wantErr = 100
		}
		if got := testutil.MetricValue(t, r, "errorPercent", op); got != wantErr {
			t.Errorf("%s: errorPercent %v, want %v", op, got, wantErr)
		}
	}
	if got := testutil.MetricValue(t, r, "requests", "{group:::cart}"); int(got) != srv.hits["/b"]+srv.hits["/c"] {
		t.Errorf("group cart: %v requests, the server %d", got, srv.hits["/b"]+srv.hits["/c"])
	}
	checkSeries(t, r)
	checkCustom(t, r)
	if apdex := seriesValues(r, "apdexRequests[Slow]"); len(apdex) == 0 || sum(apdex) != float64(srv.hits["/slow"]) {
		t.Errorf("APDEX windows of Slow counted %v, the server %d", apdex, srv.hits["/slow"])
	}
	if s := results.Stalls(r, results.DefaultStallPercent); len(s) > 0 {
		t.Errorf("stalls in a steady run: %v", s)
	}
}

// checkSeries: one point a second, whose throughput adds up to the total.
func checkSeries(t *testing.T, r *results.Result) {
	t.Helper()
	total := testutil.MetricValue(t, r, "count", "http_reqs")
	var n int
	var sumReqs, prev float64
	for _, p := range r.TimeSeries {
		v, ok := p.Values["requestsPerSecond"]
		if !ok {
			continue
		}
		n++
		sumReqs += v * (p.ElapsedSeconds - prev)
		prev = p.ElapsedSeconds
		if _, ok := p.Values["latencyP99Millis[Slow]"]; !ok {
			t.Errorf("point %v has no p99 of Slow: %v", p.ElapsedSeconds, p.Values)
		}
	}
	if n < 3 || n > 5 {
		t.Errorf("%d points over a 4 s run at 1 s", n)
	}
	if math.Abs(sumReqs-total) > 0.001*total {
		t.Errorf("the series adds up to %.2f requests, the summary says %v", sumReqs, total)
	}
}

func checkCustom(t *testing.T, r *results.Result) {
	t.Helper()
	for _, c := range []struct {
		key  results.Key
		unit string
		dir  results.Direction
	}{
		{results.Key{Name: "ratePerSecond", Operation: "items_added"}, "items/s", results.HigherIsBetter},
		{results.Key{Name: "ratePercent", Operation: "login_success"}, "%", results.HigherIsBetter},
		{results.Key{Name: "ratePercent", Operation: "cache_hits"}, "%", results.Neutral},
		{results.Key{Name: "latencyP99Millis", Operation: "cart_time"}, "ms", results.LowerIsBetter},
		{results.Key{Name: "latencyP99Millis", Operation: "cart_time{name:cart}"}, "ms", results.LowerIsBetter},
	} {
		m, ok := r.Get(c.key)
		if !ok || m.Unit != c.unit || m.Direction != c.dir {
			t.Errorf("%s: %+v, want unit %s, %s", c.key, m, c.unit, c.dir)
		}
	}
	w := strings.Join(r.Warnings, "\n")
	if !strings.Contains(w, "cache_hits") || !strings.Contains(w, MetricsField) {
		t.Errorf("no warning to declare cache_hits in %s:\n%s", MetricsField, w)
	}
	if strings.Contains(w, "login_success") || strings.Contains(w, "items_added") {
		t.Errorf("warnings about metrics whose direction is known:\n%s", w)
	}
}

func seriesValues(r *results.Result, key string) []float64 {
	var out []float64
	for _, p := range r.TimeSeries {
		if v, ok := p.Values[key]; ok {
			out = append(out, v)
		}
	}
	return out
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// k6 that fails before it opens the sample stream (a syntax error) leaves
// the runner with an empty stream, not a hung one.
func TestRealK6SyntaxErrorDoesNotHangTheStream(t *testing.T) {
	k6 := testutil.NeedEnv(t, "K6")
	dir := t.TempDir()
	script := filepath.Join(dir, "bad.js")
	if err := os.WriteFile(script, []byte("export default function ( {"), 0o644); err != nil {
		t.Fatal(err)
	}
	stream := filepath.Join(dir, "k6-samples.json")
	start := time.Now()
	r := runner.Exec(context.Background(), runner.Options{Parser: K6{}, Stdout: &strings.Builder{}, Timeout: time.Minute,
		Command: []string{k6, "run", "--out", "json=" + stream, script}, SampleStream: stream})
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the runner took %s", took)
	}
	if r.Verdict != results.Failed {
		t.Errorf("verdict %s %v", r.Verdict, r.Reasons)
	}
	if _, err := os.Stat(stream); !os.IsNotExist(err) {
		t.Errorf("the named pipe was left behind: %v", err)
	}
}
