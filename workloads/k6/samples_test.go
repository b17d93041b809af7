package k6

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// feed runs a recorded sample stream through a sink.
func feed(t testing.TB, path string, o workloads.SampleOptions) *results.Result {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return feedStream(raw, o, results.New("k6"))
}

// feedStream runs a sample stream through a sink into r (the result of
// k6's summary).
func feedStream(raw []byte, o workloads.SampleOptions, r *results.Result) *results.Result {
	s := K6{}.NewSampleSink(o)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		s.Line(sc.Bytes())
	}
	s.Finish(r)
	return r
}

// stream writes sample lines as k6 does.
type stream struct {
	b  strings.Builder
	t0 time.Time
}

func (s *stream) declare(metric, kind, contains string) {
	fmt.Fprintf(&s.b, `{"type":"Metric","data":{"name":%q,"type":%q,"contains":%q,"thresholds":[],"submetrics":null},"metric":%q}`+"\n", metric, kind, contains, metric)
}

func (s *stream) point(metric string, at time.Duration, v float64, name string) {
	fmt.Fprintf(&s.b, `{"metric":%q,"type":"Point","data":{"time":%q,"value":%g,"tags":{"group":"","name":%q,"scenario":"default"}}}`+"\n",
		metric, s.t0.Add(at).Format(time.RFC3339Nano), v, name)
}

// request writes the samples of one HTTP request.
func (s *stream) request(at time.Duration, name string, millis float64) {
	s.point("http_reqs", at, 1, name)
	s.point("http_req_duration", at, millis, name)
	s.point("http_req_failed", at, 0, name)
}

func newStream() *stream {
	s := &stream{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s.declare("http_reqs", "counter", "default")
	s.declare("http_req_duration", "trend", "time")
	s.declare("http_req_failed", "rate", "default")
	return s
}

// A sample stream recorded from k6 1.0 (3 iterations of: A, an unnamed
// /slow, Fail (500) in group checkout, custom metrics).
func TestSampleSinkRecordedStream(t *testing.T) {
	r := feed(t, "testdata/samples.jsonl", workloads.SampleOptions{APDEX: map[string]time.Duration{"*": 10 * time.Millisecond},
		Metrics: []pod.MetricDeclaration{{Name: "items_added", Unit: "items", Direction: results.HigherIsBetter}}})
	for _, c := range []struct {
		key  results.Key
		want float64
	}{
		{results.Key{Name: "requests", Operation: "A"}, 3},
		{results.Key{Name: "requests", Operation: "http://127.0.0.1:18081/slow"}, 3}, // k6 names an unnamed request by its URL
		{results.Key{Name: "errorPercent", Operation: "Fail"}, 100},
		{results.Key{Name: "errorPercent", Operation: "A"}, 0},
		{results.Key{Name: "requests", Operation: "{group:::checkout}"}, 3},
		{results.Key{Name: "ratePercent", Operation: "login_success"}, 100},
	} {
		if m, ok := r.Get(c.key); !ok || m.Value != c.want {
			t.Errorf("%s = %+v, want %v", c.key, m, c.want)
		}
	}
	if p50, _ := r.Get(results.Key{Name: "latencyP50Millis", Operation: "http://127.0.0.1:18081/slow"}); p50.Value < 20 {
		t.Errorf("/slow p50 %v", p50)
	}
	if m, _ := r.Get(results.Key{Name: "ratePercent", Operation: "login_success"}); m.Direction != results.HigherIsBetter {
		t.Errorf("a success rate is HigherIsBetter: %+v", m)
	}
	if m, _ := r.Get(results.Key{Name: "count", Operation: "items_added{name:A}"}); m.Name != "" {
		t.Errorf("items_added is not tagged by name: %+v", m)
	}
	w := strings.Join(r.Warnings, "\n")
	if !strings.Contains(w, "cache_hits") || strings.Contains(w, "items_added") || strings.Contains(w, "login_success") {
		t.Errorf("warnings: %s", w)
	}
	for _, op := range []string{"A", "Fail", "http_req_duration", "my_wait", "{group:::checkout}"} {
		if r.Histograms[op] == "" {
			t.Errorf("no histogram of %s: %v", op, r.HistogramOperations())
		}
	}
	var apdex float64
	for _, p := range r.TimeSeries {
		if v, ok := p.Values["apdexRequests[A]"]; ok {
			apdex += v
		}
	}
	if apdex != 3 {
		t.Errorf("APDEX windows of A counted %v requests, want 3", apdex)
	}
}

// Lines the sink cannot read are counted, never fatal.
func TestSampleSinkBadLines(t *testing.T) {
	s := K6{}.NewSampleSink(workloads.SampleOptions{})
	for _, l := range []string{`not json`, `{"type":"Metric","data":{"name":"http_reqs","type":"counter","contains":"default"},"metric":"http_reqs"}`,
		`{"type":"Point","metric":"http_reqs","data":{"time":"garbage","value":1}}`, `{"type":`} {
		s.Line([]byte(l))
	}
	r := results.New("k6")
	s.Finish(r)
	if !strings.Contains(strings.Join(r.Warnings, " "), "3 lines of k6's sample stream could not be read") {
		t.Errorf("warnings %v", r.Warnings)
	}
}

func TestInferDirection(t *testing.T) {
	for name, want := range map[string]results.Direction{
		"login_success": results.HigherIsBetter, "checkoutOK": results.HigherIsBetter, "passed_checks": results.HigherIsBetter,
		"login_failures": results.LowerIsBetter, "errorRate": results.LowerIsBetter,
		"cache_hits": results.Neutral, "token_refresh": results.Neutral, "fail_or_pass": results.Neutral,
	} {
		if got, _ := inferDirection(name, "rate", false); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// A request named like a custom metric: each keeps its own figures and
// histogram, whatever the metric's kind.
func TestCustomMetricNamedLikeARequest(t *testing.T) {
	for _, contains := range []string{"time", "default"} {
		t.Run(contains, func(t *testing.T) {
			s := newStream()
			s.declare("login", "trend", contains)
			for i := range 3 {
				s.request(time.Duration(i)*time.Second, "login", 10)
				s.point("login", time.Duration(i)*time.Second, 500, "")
			}
			// k6's summary of the trend, as Parse reports it.
			summary := results.New("k6")
			summary.Add(results.Metric{Name: "latencyP95Millis", Operation: "login", Value: 500, Unit: "ms", Direction: results.LowerIsBetter})
			r := feedStream([]byte(s.b.String()), workloads.SampleOptions{}, summary)
			if m, ok := r.Get(results.Key{Name: "latencyP95Millis", Operation: "login"}); !ok || math.Abs(m.Value-10) > 0.1 || m.Direction != results.LowerIsBetter {
				t.Errorf("the request's p95: %+v", m)
			}
			name := "latencyP95Millis"
			if contains != "time" {
				name = "valueP95"
			}
			if m, ok := r.Get(results.Key{Name: name, Operation: "login (trend)"}); !ok || m.Value != 500 {
				t.Errorf("the metric's %s: %+v in %v", name, m, r.Metrics)
			}
			h, err := results.DecodeHistogram(r.Histograms["login"])
			if err != nil || h.TotalCount() != 3 || h.Max() > 11000 {
				t.Errorf("the request's histogram: %v, %v", h, err)
			}
			if !strings.Contains(strings.Join(r.Warnings, "\n"), `reported as operation "login (trend)"`) {
				t.Errorf("warnings %v", r.Warnings)
			}
		})
	}
}

// A thousand distinct URLs (k6's default name) take no histogram a custom
// trend that appears last needs, and the warning says what was dropped.
func TestURLFloodKeepsCustomHistograms(t *testing.T) {
	s := newStream()
	for i := range 1000 {
		s.request(time.Duration(i)*time.Millisecond, fmt.Sprintf("http://shop/items/%d", i), 5)
	}
	s.declare("checkout_time", "trend", "time")
	s.point("checkout_time", time.Second, 42, "")
	r := feedStream([]byte(s.b.String()), workloads.SampleOptions{}, results.New("k6"))
	for _, op := range []string{"checkout_time", "http_req_duration", "http://shop/items/0"} {
		if r.Histograms[op] == "" {
			t.Errorf("no histogram of %s", op)
		}
	}
	if r.Histograms["http://shop/items/64"] != "" {
		t.Error("more request names than maxNameHistograms have a histogram")
	}
	w := strings.Join(r.Warnings, "\n")
	if !strings.Contains(w, "request names (or custom metrics by name) have no latency histogram, the first 64 have") ||
		!strings.Contains(w, "in the whole run's figures only") || !strings.Contains(w, "{tags: {name: 'items'}}") {
		t.Errorf("warnings: %s", w)
	}
}

// Samples that reach the sink after their interval of the time series was
// closed are counted, and said.
func TestLateSamplesAreReported(t *testing.T) {
	s := newStream()
	s.request(0, "A", 5)
	s.request(10*time.Second, "A", 5)
	s.request(time.Second, "A", 5) // flushed late by k6: 6 observations (overall and A's own)
	r := feedStream([]byte(s.b.String()), workloads.SampleOptions{}, results.New("k6"))
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "6 observations of the time series arrived after their interval was closed") {
		t.Errorf("warnings %v", r.Warnings)
	}
}
