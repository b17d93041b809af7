package k6

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Finish adds what k6's samples say to the result of its summary: per
// request name (and per group and scenario when the script has several)
// throughput, latency percentiles and error share, with each operation's
// latency histogram so that load generators merge into true percentiles;
// custom metrics per request name; the units and directions of custom
// metrics; and the time series.
func (s *sink) Finish(r *results.Result) {
	defer s.addStages(r)
	span := s.span(r)
	dur, reqs, failed := s.metrics["http_req_duration"], s.metrics["http_reqs"], s.metrics["http_req_failed"]
	names := tagValues(dur, reqs, func(m *metricState) map[string]*agg { return m.byName })
	s.separateCustomMetrics(r, names)
	for _, n := range names {
		s.addRequests(r, n, pick(dur, n, byName), pick(reqs, n, byName), pick(failed, n, byName), span, len(names) > headlineOpLimit)
	}
	for _, d := range []struct {
		tag string
		by  func(*metricState) map[string]*agg
	}{{"group", byGroup}, {"scenario", byScenario}} {
		if values := tagValues(dur, reqs, d.by); len(values) > 1 {
			for _, v := range values {
				op := operation("http_req_duration", d.tag+":"+v)
				s.addRequests(r, op, pick(dur, v, d.by), pick(reqs, v, d.by), pick(failed, v, d.by), span, true)
			}
		}
	}
	if g := s.metrics["group_duration"]; g != nil {
		for _, v := range workloads.SortedKeys(g.byGroup) {
			s.addLatency(r, operation(g.name, "group:"+v), g.byGroup[v], true)
		}
	}
	if it := s.metrics["iteration_duration"]; it != nil && len(it.byScenario) > 1 {
		for _, v := range workloads.SortedKeys(it.byScenario) {
			s.addLatency(r, operation(it.name, "scenario:"+v), it.byScenario[v], true)
		}
		if n := s.metrics["iterations"]; n != nil {
			for _, v := range workloads.SortedKeys(n.byScenario) {
				r.Add(results.Metric{Name: "iterationsPerSecond", Operation: operation(n.name, "scenario:"+v), Value: float64(n.byScenario[v].count) / span,
					Unit: "it/s", Direction: results.HigherIsBetter, Detail: true})
			}
		}
	}
	s.addTotals(r)
	s.addCustom(r, span)
	s.addSeries(r)
	switch {
	case s.fromTool:
		r.SetParam(SampleAggregationParam, AggregatedInK6)
		r.SetParam("samples", strconv.FormatInt(s.lines, 10))
		if s.bad > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%d of k6's samples were not numbers (NaN or infinite) and were left out", s.bad))
		}
	default:
		r.SetParam(SampleAggregationParam, AggregatedFromStream)
		r.SetParam("sampleLines", strconv.FormatInt(s.lines, 10))
		if s.bad > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%d lines of k6's sample stream could not be read", s.bad))
		}
	}
	s.warnDropped(r)
}

// nameAdvice is k6's own advice for requests whose URLs vary.
const nameAdvice = "k6 names a request by its URL unless the script tags it: give requests whose URLs vary one name, http.get(url, {tags: {name: 'items'}})"

// warnDropped says what the sink's bounds left out.
func (s *sink) warnDropped(r *results.Result) {
	if s.unbroken > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d samples of request names, groups or scenarios past the first %d operations are in the whole run's figures only; %s",
			s.unbroken, maxOperations, nameAdvice))
	}
	if s.namesWithoutHist > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d request names (or custom metrics by name) have no latency histogram, the first %d have: their percentiles are not reported and do not merge across load generators; %s",
			s.namesWithoutHist, maxNameHistograms, nameAdvice))
	}
	if s.othersWithoutHist > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d trends, groups or scenarios have no latency histogram (at most %d are kept): their percentiles are not reported and do not merge across load generators",
			s.othersWithoutHist, maxHistograms))
	}
}

// separateCustomMetrics gives a custom metric named like a request an
// operation of its own, "login (trend)": k6 keeps the two apart, and in
// one operation the request's figures would be described as the metric's
// and its histogram overwritten. The summary's figures of the metric are
// renamed too.
func (s *sink) separateCustomMetrics(r *results.Result, requestNames []string) {
	for _, n := range requestNames {
		m := s.metrics[n]
		if m == nil || m.known {
			continue
		}
		op := fmt.Sprintf("%s (%s)", n, m.kind)
		s.customOps[n] = op
		for i := range r.Metrics {
			if r.Metrics[i].Operation == n {
				r.Metrics[i].Operation = op
			}
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("the k6 metric %s (a %s) is named like a request: its figures are reported as operation %q, the request's as %q", n, m.kind, op, n))
	}
}

// metricOp is the operation of a metric's whole-run figures: its name,
// unless a request has it.
func (s *sink) metricOp(name string) string {
	if op, ok := s.customOps[name]; ok {
		return op
	}
	return name
}

func byName(m *metricState) map[string]*agg     { return m.byName }
func byGroup(m *metricState) map[string]*agg    { return m.byGroup }
func byScenario(m *metricState) map[string]*agg { return m.byScenario }

// tagValues lists a breakdown's tag values of the HTTP metrics, sorted.
func tagValues(dur, reqs *metricState, by func(*metricState) map[string]*agg) []string {
	seen := map[string]bool{}
	for _, m := range []*metricState{dur, reqs} {
		if m != nil {
			for v := range by(m) {
				seen[v] = true
			}
		}
	}
	return workloads.SortedKeys(seen)
}

func pick(m *metricState, v string, by func(*metricState) map[string]*agg) *agg {
	if m == nil {
		return nil
	}
	return by(m)[v]
}

// span is the time the per-operation rates are per: the summary's, so that
// they add up to its rates, else the samples' own.
func (s *sink) span(r *results.Result) float64 {
	for _, c := range []struct{ metric, rate string }{{"http_reqs", "requestsPerSecond"}, {"iterations", "iterationsPerSecond"}} {
		n, ok1 := r.Get(results.Key{Name: "count", Operation: c.metric})
		rate, ok2 := r.Get(results.Key{Name: c.rate, Operation: c.metric})
		if ok1 && ok2 && n.Value > 0 && rate.Value > 0 {
			return n.Value / rate.Value
		}
	}
	if d := s.last.Sub(s.first).Seconds(); d > 0 {
		return d
	}
	return 1
}

// addRequests adds an operation's requests: throughput, count, error share
// and latency.
func (s *sink) addRequests(r *results.Result, op string, dur, reqs, failed *agg, span float64, detail bool) {
	if reqs != nil && reqs.count > 0 {
		r.Add(results.Metric{Name: "requestsPerSecond", Operation: op, Value: reqs.sum / span, Unit: "req/s", Direction: results.HigherIsBetter, Detail: detail})
		r.Add(results.Metric{Name: "requests", Operation: op, Value: reqs.sum, Unit: "count", Direction: results.Neutral, Detail: true})
	}
	if failed != nil && failed.count > 0 {
		r.Add(results.Metric{Name: "errorPercent", Operation: op, Value: 100 * float64(failed.nonzero) / float64(failed.count), Unit: "%",
			Direction: results.LowerIsBetter, Detail: true})
	}
	if dur != nil {
		s.addLatency(r, op, dur, detail)
	}
}

// addLatency adds a time trend's percentiles (from its histogram), average,
// minimum and maximum, and keeps its histogram.
func (s *sink) addLatency(r *results.Result, op string, a *agg, detail bool) {
	if a == nil || a.count == 0 {
		return
	}
	add := func(name string, v float64, d bool) {
		r.Add(results.Metric{Name: name, Operation: op, Value: v, Unit: "ms", Direction: results.LowerIsBetter, Detail: d})
	}
	if a.hist != nil {
		for _, p := range []struct {
			name string
			q    float64
			d    bool
		}{{"latencyP50Millis", 50, true}, {"latencyP95Millis", 95, true}, {"latencyP99Millis", 99, detail}, {"latencyP999Millis", 99.9, true}} {
			add(p.name, float64(a.hist.ValueAtQuantile(p.q))/1000, p.d)
		}
		if err := r.SetHistogram(op, a.hist); err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("histogram of %s not kept: %v", op, err))
		}
	}
	add("latencyAverageMillis", a.sum/float64(a.count), true)
	add("latencyMinMillis", a.min, true)
	add("latencyMaxMillis", a.max, true)
}

// addTotals keeps the histograms of the whole run's trends (the summary
// has their figures) and adds their figures when the summary lacks them.
func (s *sink) addTotals(r *results.Result) {
	for _, name := range workloads.SortedKeys(s.metrics) {
		m := s.metrics[name]
		if m.total == nil || m.total.count == 0 || m.kind != "trend" || !m.time {
			continue
		}
		op := s.metricOp(name)
		if _, ok := r.Get(results.Key{Name: "latencyAverageMillis", Operation: op}); ok {
			if m.total.hist != nil {
				if err := r.SetHistogram(op, m.total.hist); err != nil {
					r.Warnings = append(r.Warnings, fmt.Sprintf("histogram of %s not kept: %v", op, err))
				}
			}
			continue
		}
		s.addLatency(r, op, m.total, detail[name])
	}
}

// addSeries adds the time series and the APDEX windows, and says at which
// resolution.
func (s *sink) addSeries(r *results.Result) {
	f := s.finishSeries()
	pts := append([]results.Point(nil), f.Points...)
	r.Progress = f.Progress // the finest resolution, for the stall, dip and drift checks
	if s.sawHTTP {
		// A script's first iterations can end before its first request.
		for _, p := range pts {
			for k := range p.Values {
				if strings.HasSuffix(k, "[iteration_duration]") {
					delete(p.Values, k)
				}
			}
		}
	}
	pts = append(pts, f.APDEX...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].ElapsedSeconds < pts[j].ElapsedSeconds })
	if len(pts) == 0 {
		return
	}
	r.TimeSeries = append(r.TimeSeries, pts...)
	r.SetParam(results.SeriesResolutionParam, f.Resolution.String())
	if n := f.Late; n > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d observations of the time series arrived after their interval was closed (k6 flushes its samples in batches) and were counted in a later one: the series is smoothed there, the totals are exact", n))
	}
	if u := f.UpperUntil; u > 0 {
		r.SetParam("timeSeriesUpperBoundsUntil", strconv.FormatFloat(u, 'f', -1, 64)+"s")
	}
	if len(s.opts.APDEX) > 0 {
		r.SetParam(results.APDEXWindowParam, f.APDEXWindow.String())
	}
}
