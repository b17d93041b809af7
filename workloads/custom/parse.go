package custom

import (
	"fmt"
	"math"
	"sort"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Parse reads a custom tool's results, from its result file or its output,
// in the format its configuration (ParseInput.Config) names. What it
// cannot read makes the measurement Invalid with a reason naming the line
// and the field, and keeps everything else the tool reported; a missing
// primary metric, result file or format header makes it Failed.
func (Custom) Parse(in workloads.ParseInput) *results.Result {
	r := results.New("custom")
	cfg, err := decodeConfig(in.Config)
	if err != nil {
		r.Fail("%v", err)
		workloads.JudgeExitCode(r, "the custom tool", in.ExitCode)
		return r
	}
	r.Primary = cfg.Primary
	r.SetParam("tool", cfg.Tool)
	src := source{name: "output", data: in.Output}
	if cfg.ResultFile != "" {
		data, ok := in.Files[cfg.ResultFile]
		if !ok {
			r.Fail("%s wrote no result file %s (the file DBPERF_RESULT_FILE names)", cfg.Tool, cfg.ResultFile)
			workloads.JudgeExitCode(r, cfg.Tool, in.ExitCode)
			return r
		}
		src = source{name: cfg.ResultFile, data: data, file: true}
	}
	c := &collector{r: r, cfg: cfg, src: src, first: map[results.Key]string{}, hists: map[string]*hdr.Histogram{},
		histAt: map[string]string{}, bucketed: map[string]bool{}, points: map[float64]map[string]float64{}}
	switch cfg.Format {
	case benchv1.CustomLines:
		c.lines()
	case benchv1.CustomOpenMetrics:
		c.openMetrics()
	case benchv1.CustomResultJSON:
		c.resultJSON()
	}
	c.finish(in.ExitCode)
	return r
}

// source is where the results are: the output or a result file.
type source struct {
	name string
	data []byte
	file bool
}

// maxProblems bounds the reasons a malformed result lists one by one.
const maxProblems = 10

// collector builds a result from a format's records, each format reading
// its own syntax and handing over metrics, histograms and series points.
type collector struct {
	r   *results.Result
	cfg parserConfig
	src source
	// first is where each metric was first reported.
	first  map[results.Key]string
	hists  map[string]*hdr.Histogram
	histAt map[string]string
	// bucketed are the operations whose histogram holds bucket bounds
	// (OpenMetrics), not the values: no minimum or maximum of them.
	bucketed map[string]bool
	points   map[float64]map[string]float64
	problems int
}

// line names a line of the source in a reason: "output line 12".
func (c *collector) line(n int) string { return fmt.Sprintf("%s line %d", c.src.name, n) }

// invalid records a part of the results that cannot be read: the
// measurement is Invalid, and what else was read is kept.
func (c *collector) invalid(format string, args ...any) {
	c.problems++
	if c.problems <= maxProblems {
		c.r.Invalidate(format, args...)
	}
}

// add records a metric reported at loc, its unit and direction as given
// ("" when not, then declared or inferred); unitField and dirField name
// where they would be given.
func (c *collector) add(loc, unitField, dirField string, m results.Metric) {
	if !finite(m.Value) {
		// NaN and ±Inf have no JSON form: the whole result would be lost.
		c.invalid("%s: %s is %v, not a number the results can keep; left out", loc, m.Key(), m.Value)
		return
	}
	if at, dup := c.first[m.Key()]; dup {
		c.invalid("%s: %s was already reported (%s); the first is kept", loc, m.Key(), at)
		return
	}
	c.first[m.Key()] = loc
	d, declared := c.cfg.declared(m.Name)
	switch {
	case declared && d.Unit != "":
		m.Unit = d.Unit
	case m.Unit == "":
		u, ok := unitOfName(m.Name)
		if !ok {
			c.invalid("%s, %s: %s has no unit: give one, declare it in spec.workload.custom.metrics, or name the metric with its unit (…Millis, …PerSecond, …Percent, …Bytes, _seconds)",
				loc, unitField, m.Key())
		}
		m.Unit = u
	}
	switch {
	case declared && d.Direction != "":
		m.Direction = d.Direction
	case m.Direction == results.Neutral:
		if dir, ok := workloads.DirectionOfShare(m.Name); ok {
			m.Direction = dir
			c.r.Warnings = append(c.r.Warnings, fmt.Sprintf("%s, %s: %s is a share of successes or failures, which is never Neutral: %s", loc, dirField, m.Key(), dir))
		}
	case m.Direction == "":
		dir, ok := directionOf(m.Name, m.Unit)
		if !ok {
			give := "declare one"
			if dirField != "" {
				give = "give one in " + dirField + " or declare one"
			}
			c.r.Warnings = append(c.r.Warnings, fmt.Sprintf("%s: %s has no direction dbperf can tell, so it is Neutral and never judged: %s in spec.workload.custom.metrics",
				loc, m.Key(), give))
		}
		m.Direction = dir
	}
	c.r.Add(m)
}

// histogram records an operation's latency histogram (µs) reported at loc.
func (c *collector) histogram(loc, op string, h *hdr.Histogram) {
	if at, dup := c.histAt[op]; dup {
		c.invalid("%s: a second histogram of %s (the first: %s); the first is kept", loc, opName(op), at)
		return
	}
	sum := results.NewHistogram()
	if dropped := sum.Merge(h); dropped > 0 {
		c.invalid("%s: the histogram of %s holds %d values outside 1 µs to 1 h (are they microseconds?): not kept", loc, opName(op), dropped)
		return
	}
	c.histAt[op] = loc
	if sum.TotalCount() == 0 {
		c.r.Warnings = append(c.r.Warnings, fmt.Sprintf("%s: the histogram of %s is empty", loc, opName(op)))
		return
	}
	c.hists[op] = sum
}

// point records one value of the time series.
func (c *collector) point(seconds float64, name string, v float64) {
	p := c.points[seconds]
	if p == nil {
		p = map[string]float64{}
		c.points[seconds] = p
	}
	p[name] = v
}

func opName(op string) string {
	if op == "" {
		return "the whole run"
	}
	return op
}

// histogramMetrics are the figures of a latency histogram, named as every
// tool's parser names them, so that parallel load generators' results
// merge into true percentiles (results.Merge recomputes them from the
// merged histograms).
var histogramMetrics = []struct {
	name   string
	q      float64
	detail bool
}{{"latencyP50Millis", 50, true}, {"latencyP90Millis", 90, true}, {"latencyP95Millis", 95, true},
	{"latencyP99Millis", 99, false}, {"latencyP999Millis", 99.9, true}}

// finish adds what the histograms and series say, and judges the result.
func (c *collector) finish(exit *int) {
	r := c.r
	for _, op := range workloads.SortedKeys(c.hists) {
		h := c.hists[op]
		add := func(name string, v float64, unit string, dir results.Direction, detail bool) {
			if _, ok := c.first[results.Key{Name: name, Operation: op}]; ok {
				return // the tool's own figure
			}
			r.Add(results.Metric{Name: name, Operation: op, Value: v, Unit: unit, Direction: dir, Detail: detail})
		}
		for _, p := range histogramMetrics {
			add(p.name, float64(h.ValueAtPercentile(p.q))/1000, "ms", results.LowerIsBetter, p.detail)
		}
		add("latencyAverageMillis", h.Mean()/1000, "ms", results.LowerIsBetter, true)
		if !c.bucketed[op] {
			add("latencyMinMillis", float64(h.Min())/1000, "ms", results.LowerIsBetter, true)
			add("latencyMaxMillis", float64(h.Max())/1000, "ms", results.LowerIsBetter, true)
		}
		if _, ok := c.first[results.Key{Name: "requests", Operation: op}]; !ok {
			add("operations", float64(h.TotalCount()), "count", results.Neutral, true)
		}
		if err := r.SetHistogram(op, h); err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("histogram of %s not kept: %v", opName(op), err))
		}
	}
	times := make([]float64, 0, len(c.points))
	for t := range c.points {
		times = append(times, t)
	}
	sort.Float64s(times)
	for _, t := range times {
		r.TimeSeries = append(r.TimeSeries, results.Point{ElapsedSeconds: t, Values: c.points[t]})
	}
	if n := c.problems - maxProblems; n > 0 {
		r.Invalidate("%d more problems in %s, not listed", n, c.src.name)
	}
	c.judgePrimary()
	workloads.RequireSuccess(r)
	workloads.JudgeExitCode(r, c.cfg.Tool, exit)
}

func (c *collector) judgePrimary() {
	r := c.r
	for i := range r.Metrics {
		m := &r.Metrics[i]
		if m.Key() != r.Primary {
			continue
		}
		m.Detail = false
		if m.Direction == results.Neutral {
			r.Invalidate("the primary metric %s is Neutral, so no comparison can judge it: give it a direction or declare one in spec.workload.custom.metrics", r.Primary)
		}
		return
	}
	r.Fail("the primary metric %s (spec.workload.custom.primaryMetric) is not in the results of %s (%s)", r.Primary, c.cfg.Tool, c.src.name)
}

// unitOfName is the unit a metric's name says: the API's habit of the
// unit in the name (latencyP99Millis, opsPerSecond, errorPercent).
func unitOfName(name string) (string, bool) {
	if per, ok := strings.CutSuffix(name, "PerSecond"); ok && per != "" {
		return per + "/s", true
	}
	for _, s := range []struct{ suffix, unit string }{
		{"Millis", "ms"}, {"Micros", "us"}, {"Nanos", "ns"}, {"Seconds", "s"},
		{"Percent", "%"}, {"Bytes", "bytes"}, {"Count", "count"},
	} {
		if strings.HasSuffix(name, s.suffix) && len(name) > len(s.suffix) {
			return s.unit, true
		}
	}
	switch name {
	case "operations", "requests", "transactions", "calls":
		return "count", true
	}
	return "", false
}

// directionOf infers which way a metric improves: a share of failures or
// successes by its name (workloads.DirectionOfShare), a rate per second
// is a throughput, a time is a latency.
func directionOf(name, unit string) (results.Direction, bool) {
	if dir, ok := workloads.DirectionOfShare(name); ok {
		return dir, true
	}
	switch {
	case strings.HasSuffix(unit, "/s"):
		return results.HigherIsBetter, true
	case isTime(unit):
		return results.LowerIsBetter, true
	}
	return results.Neutral, false
}

func isTime(unit string) bool {
	switch unit {
	case "ns", "us", "µs", "ms", "s":
		return true
	}
	return false
}

// finite is a number a metric may hold.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
