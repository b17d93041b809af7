package k6

import (
	"strings"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// samplesFile is where k6 writes its raw samples (--out json): a named
// pipe the runner reads while k6 runs.
const samplesFile = pod.OutputDir + "/k6-samples.json"

// Bounds of the sink's memory: operations broken down, those of them with
// a latency histogram (188 KB each), and those with a time series.
const (
	maxOperations = 300
	maxHistograms = 100
	// Request names (k6 names a request by its URL unless the script tags
	// it) take at most this many histograms: the rest are kept for the
	// whole run's trends, groups, scenarios and custom metrics.
	maxNameHistograms = 64
	// Request names with a time series of their own (latency
	// percentiles, requests and errors a second): a comparison draws each
	// operation that changed over time, which it can only do for one
	// with a series. The series' size budget coarsens their resolution
	// when many are kept.
	maxSeriesOps    = 24
	headlineOpLimit = 4
)

var _ workloads.SampleParser = K6{}

// NewSampleSink returns the sink of k6's JSON sample stream.
func (K6) NewSampleSink(o workloads.SampleOptions) workloads.SampleSink {
	if o.Resolution <= 0 {
		o.Resolution = pod.DefaultSeriesResolution
	}
	if o.APDEXWindow <= 0 {
		o.APDEXWindow = pod.DefaultAPDEXWindow
	}
	return &sink{opts: o, metrics: map[string]*metricState{}, seriesNames: map[string]bool{}, customOps: map[string]string{},
		series: results.NewSeriesBuilder(o.Resolution, 0), apdex: results.NewAPDEXWindows(o.APDEXWindow, 0)}
}

// sink aggregates k6's samples per metric and per request name, group and
// scenario, with flat memory: counters and histograms, never samples.
type sink struct {
	opts    workloads.SampleOptions
	metrics map[string]*metricState
	sc      scanner
	tc      timeCache
	line    sampleLine
	series  *results.SeriesBuilder
	apdex   *results.APDEXWindows

	lines, bad, unbroken int64
	first, last          time.Time
	ops, hists           int
	nameHists            int
	// Operations refused a histogram: request names, others.
	namesWithoutHist, othersWithoutHist int
	seriesNames                         map[string]bool
	sawHTTP                             bool
	// customOps are the operations of custom metrics named like a request.
	customOps map[string]string
	// stages count each stage of a ramp (opts.Stages), from started (the
	// tool's start, unix nanoseconds; set by another goroutine); vusFirst
	// is k6's first sample of its VUs.
	stages   []stageAgg
	started  atomic.Int64
	vusFirst time.Time
	// finished is what the time series came to (finishSeries); fromTool:
	// the sink was loaded from k6's own aggregates (LoadAggregate).
	finished *finishedSeries
	fromTool bool
}

// metricState is one k6 metric: its kind and its aggregates, overall and
// per tag value.
type metricState struct {
	name, kind string
	time       bool
	known      bool // a k6 built-in
	use        usage
	total      *agg
	byName     map[string]*agg
	byGroup    map[string]*agg
	byScenario map[string]*agg
}

// usage says which breakdowns of a metric the sink keeps.
type usage struct {
	keep, total, totalHist, name, group, scenario bool
}

// agg aggregates the samples of one metric (and one tag value).
type agg struct {
	count, nonzero int64
	sum, min, max  float64
	hist           *hdr.Histogram
	// The series key of a request name's own time series (a count per
	// second, or the operation of its latency), empty: none.
	seriesKey     string
	seriesLatency bool
	// APDEX target of its operation, zero: none.
	apdexOp     string
	apdexTarget time.Duration
}

func (a *agg) add(v float64) {
	if a.count == 0 || v < a.min {
		a.min = v
	}
	if a.count == 0 || v > a.max {
		a.max = v
	}
	a.count++
	a.sum += v
	if v != 0 {
		a.nonzero++
	}
	if a.hist != nil {
		_ = a.hist.RecordValue(results.MillisToMicros(v))
	}
}

// usageOf says what is kept of a metric: HTTP requests per name, group and
// scenario; iterations per scenario; groups' durations per group; custom
// metrics overall and per name where the script tags them; other built-ins
// are left to the end-of-test summary.
func usageOf(name, kind string, time, known bool) usage {
	switch name {
	case "http_req_duration":
		return usage{keep: true, total: true, totalHist: true, name: true, group: true, scenario: true}
	case "http_reqs", "http_req_failed":
		return usage{keep: true, total: true, name: true, group: true, scenario: true}
	case "http_req_waiting":
		return usage{keep: true, total: true, totalHist: true}
	case "iteration_duration":
		return usage{keep: true, total: true, totalHist: true, scenario: true}
	case "iterations":
		return usage{keep: true, total: true, scenario: true}
	case "group_duration":
		return usage{keep: true, group: true}
	}
	if known {
		return usage{}
	}
	return usage{keep: true, total: true, totalHist: kind == "trend" && time, name: true}
}

// Line reads one line of k6's JSON output.
func (s *sink) Line(b []byte) {
	s.lines++
	l := &s.line
	if !s.sc.parseLine(b, l) {
		s.bad++
		return
	}
	switch string(l.kind) {
	case "Metric":
		s.declare(l)
	case "Point":
		s.point(l)
	}
}

func (s *sink) declare(l *sampleLine) {
	if _, ok := s.metrics[string(l.metric)]; ok {
		return
	}
	s.declareMetric(string(l.metric), string(l.metricType), string(l.contains))
}

// declareMetric adds a metric of a kind (counter, gauge, rate, trend)
// holding a kind of value (time, data, default).
func (s *sink) declareMetric(name, kind, contains string) *metricState {
	known, isTime := builtin(name), contains == "time"
	m := &metricState{name: name, kind: kind, time: isTime, known: known, use: usageOf(name, kind, isTime, known)}
	if m.use.total {
		m.total = s.newAgg(m, "", m.use.totalHist)
	}
	s.metrics[name] = m
	return m
}

func (s *sink) point(l *sampleLine) {
	m := s.metrics[string(l.metric)]
	if m == nil || (!m.use.keep && !s.wantsVUs(m)) {
		return
	}
	t, ok := s.tc.parse(l.time)
	if !ok {
		if m.use.keep {
			s.bad++
		}
		return
	}
	s.add(m, t, l.value, l.name, l.group, l.scenario)
}

// add aggregates one sample of a metric, with its request name, group
// and scenario tags (empty: none).
func (s *sink) add(m *metricState, t time.Time, v float64, name, group, scenario []byte) {
	if s.wantsVUs(m) {
		s.vusFirst = t
	}
	if !m.use.keep {
		return
	}
	if s.first.IsZero() {
		s.first = t
		s.series.Start(t)
		s.apdex.Start(t)
	}
	if t.After(s.last) {
		s.last = t
	}
	if m.total != nil {
		m.total.add(v)
		s.observe(m.total, t, v)
	}
	if m.use.name && len(name) > 0 {
		if a := s.breakdown(m, &m.byName, name, "name"); a != nil {
			a.add(v)
			s.observe(a, t, v)
		}
	}
	if m.use.group {
		if a := s.breakdown(m, &m.byGroup, group, "group"); a != nil {
			a.add(v)
			s.observe(a, t, v)
		}
	}
	if m.use.scenario {
		if a := s.breakdown(m, &m.byScenario, scenario, "scenario"); a != nil {
			a.add(v)
			s.observe(a, t, v)
		}
	}
	s.feedSeries(m, t, v)
	s.countStage(m, t, v)
}

// wantsVUs says whether m is k6's VUs and its first sample is still
// wanted: when k6 started its test, for the stages.
func (s *sink) wantsVUs(m *metricState) bool {
	return m.name == "vus" && s.vusFirst.IsZero() && len(s.opts.Stages) > 0
}

// feedSeries adds the overall figures of a sample to the time series.
func (s *sink) feedSeries(m *metricState, t time.Time, v float64) {
	switch m.name {
	case "http_reqs":
		s.series.Count(t, "requestsPerSecond", v)
	case "http_req_failed":
		s.series.Count(t, "errorsPerSecond", v)
	case "iterations":
		s.series.Count(t, "iterationsPerSecond", v)
	case "http_req_duration":
		s.sawHTTP = true
		s.series.Record(t, "", results.MillisToMicros(v))
	case "iteration_duration":
		// The overall latency of a script without HTTP requests.
		if !s.sawHTTP {
			s.series.Record(t, "iteration_duration", results.MillisToMicros(v))
		}
	}
}

// observe feeds a breakdown's own series and APDEX windows.
func (s *sink) observe(a *agg, t time.Time, v float64) {
	switch {
	case a.seriesKey == "":
	case a.seriesLatency:
		s.series.Record(t, a.seriesKey, results.MillisToMicros(v))
	default:
		s.series.Count(t, a.seriesKey, v)
	}
	if a.apdexTarget > 0 {
		s.apdex.Observe(t, a.apdexOp, results.MillisToMicros(v), a.apdexTarget)
	}
}

// breakdown returns the aggregate of a tag value, created on first use
// while the bounds allow; nil past them (counted, and reported).
func (s *sink) breakdown(m *metricState, by *map[string]*agg, value []byte, tag string) *agg {
	if a, ok := (*by)[string(value)]; ok {
		return a
	}
	if s.ops >= maxOperations {
		s.unbroken++
		return nil
	}
	if *by == nil {
		*by = map[string]*agg{}
	}
	v := string(value)
	a := s.newAgg(m, tag+":"+v, m.time && (m.kind == "trend"))
	if tag == "name" {
		s.nameSeries(m, a, v)
	}
	(*by)[v] = a
	return a
}

func (s *sink) newAgg(m *metricState, dim string, hist bool) *agg {
	s.ops++
	a := &agg{}
	byName := strings.HasPrefix(dim, "name:")
	switch {
	case !hist:
	case s.hists < maxHistograms && (!byName || s.nameHists < maxNameHistograms):
		a.hist = results.NewHistogram()
		s.hists++
		if byName {
			s.nameHists++
		}
	case byName:
		s.namesWithoutHist++
	default:
		s.othersWithoutHist++
	}
	if hist {
		op := operation(m.name, dim)
		a.apdexOp = op
		// "*" asks, per window, for the whole run's trends and the request
		// names with a series of their own (nameSeries).
		a.apdexTarget = s.apdexTarget(op, dim == "" && m.name != "http_req_waiting")
	}
	return a
}

// nameSeries gives the first request names a time series of their own.
func (s *sink) nameSeries(m *metricState, a *agg, name string) {
	series := map[string]string{"http_req_duration": "", "http_reqs": "requestsPerSecond", "http_req_failed": "errorsPerSecond"}
	key, ok := series[m.name]
	if !ok {
		return
	}
	if !s.seriesNames[name] {
		if len(s.seriesNames) >= maxSeriesOps {
			return
		}
		s.seriesNames[name] = true
	}
	if key == "" {
		a.seriesKey, a.seriesLatency = name, true
		a.apdexTarget = s.apdexTarget(name, true)
		return
	}
	a.seriesKey = results.Key{Name: key, Operation: name}.String()
}

// apdexTarget is the APDEX target of an operation: its own, else the one
// for all operations when all is allowed.
func (s *sink) apdexTarget(op string, all bool) time.Duration {
	if t, ok := s.opts.APDEX[op]; ok {
		return t
	}
	if all {
		return s.opts.APDEX[results.AllOperations]
	}
	return 0
}

// operation names a metric's breakdown: an HTTP request's name itself,
// {group:::g} or {scenario:s} for HTTP requests in a group or a scenario,
// else k6's submetric syntax, metric{tag:value}.
func operation(metric, dim string) string {
	switch {
	case dim == "":
		return metric
	case metric != "http_req_duration" && metric != "http_reqs" && metric != "http_req_failed":
		return metric + "{" + dim + "}"
	case strings.HasPrefix(dim, "name:"):
		return dim[len("name:"):]
	}
	return "{" + dim + "}"
}
