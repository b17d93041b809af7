package custom

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// openMetrics reads the OpenMetrics text format with prometheus/common's
// parser of the Prometheus text format, which OpenMetrics extends. What
// the parser does not know of OpenMetrics is handled first, line for line
// so that its line numbers stay the source's (exposition.normalize).
// Gauges, counters and untyped samples become metrics named as their
// family, histograms and summaries of a time the latency figures of an
// operation; the label operation names the operation.
func (c *collector) openMetrics() {
	x, ok := readExposition(c.src)
	if !ok {
		c.r.Fail("no OpenMetrics exposition in the %s of %s: it begins with a # TYPE or # HELP line", c.src.name, c.cfg.Tool)
		return
	}
	c.r.Warnings = append(c.r.Warnings, x.warnings...)
	for _, p := range x.problems {
		c.invalid("%s %s", c.src.name, p)
	}
	families, err := parseText(x.text)
	if err != nil {
		// The parser's error names the line; what it read before is kept.
		c.invalid("%s: %v", c.src.name, err)
	}
	if len(families) == 0 && err == nil {
		c.r.Fail("the OpenMetrics exposition in the %s of %s holds no sample", c.src.name, c.cfg.Tool)
		return
	}
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c.family(x, families[n])
	}
}

// parseText runs prometheus/common's text parser, whose panics on some
// malformed input (a sample line of "{}" in v0.62) are parse errors here:
// a runner that crashed would leave no result at all.
func parseText(text []byte) (families map[string]*dto.MetricFamily, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the text format parser failed on it: %v", p)
		}
	}()
	var p expfmt.TextParser
	return p.TextToMetricFamilies(bytes.NewReader(text))
}

func (c *collector) family(x *exposition, mf *dto.MetricFamily) {
	name := mf.GetName()
	loc := fmt.Sprintf("%s line %d (family %s)", c.src.name, x.lines[name], name)
	unit := c.familyUnit(x, name, mf.GetType())
	switch mf.GetType() {
	case dto.MetricType_HISTOGRAM, dto.MetricType_SUMMARY:
		scale, ok := toMillis(unit)
		if !ok {
			c.r.Warnings = append(c.r.Warnings, fmt.Sprintf("%s: a %s of %s is no latency (only a unit of time, such as _seconds, is): left out",
				loc, strings.ToLower(mf.GetType().String()), orNone(unit)))
			return
		}
		for _, m := range mf.GetMetric() {
			op := operationOf(m.GetLabel())
			if op == "" {
				op = name
			}
			if m.GetHistogram() != nil {
				c.promHistogram(loc, op, m.GetHistogram(), scale)
			} else {
				c.promSummary(loc, op, m.GetSummary(), scale)
			}
		}
	default:
		for _, m := range mf.GetMetric() {
			v := m.GetGauge().GetValue()
			switch {
			case m.GetCounter() != nil:
				v = m.GetCounter().GetValue()
			case m.GetUntyped() != nil:
				v = m.GetUntyped().GetValue()
			}
			if !finite(v) {
				c.invalid("%s: the sample %s%s is %v, not a number a measurement can hold", loc, name, labelText(m.GetLabel()), v)
				continue
			}
			c.add(loc, "its # UNIT line", "", results.Metric{Name: name, Operation: operationOf(m.GetLabel()), Value: v, Unit: unit})
		}
	}
}

// familyUnit is a family's unit: declared, else from # UNIT, else from
// its name; "" when nothing tells (add then says so).
func (c *collector) familyUnit(x *exposition, name string, t dto.MetricType) string {
	if d, ok := c.cfg.declared(name); ok && d.Unit != "" {
		return d.Unit
	}
	if u, ok := x.units[name]; ok {
		return openMetricsUnit(u)
	}
	base := name
	if t == dto.MetricType_COUNTER {
		base = strings.TrimSuffix(name, "_total")
	}
	if per, ok := strings.CutSuffix(base, "_per_second"); ok && per != "" {
		return per[strings.LastIndex(per, "_")+1:] + "/s"
	}
	for _, suffix := range []string{"_seconds", "_milliseconds", "_microseconds", "_bytes", "_ratio", "_percent"} {
		if strings.HasSuffix(base, suffix) {
			return openMetricsUnit(suffix[1:])
		}
	}
	if u, ok := unitOfName(base); ok {
		return u
	}
	if t == dto.MetricType_COUNTER {
		return "count"
	}
	return ""
}

// openMetricsUnit writes an OpenMetrics unit (base units, spelled out) as
// the results spell units.
func openMetricsUnit(u string) string {
	switch u {
	case "seconds":
		return "s"
	case "milliseconds":
		return "ms"
	case "microseconds":
		return "us"
	case "percent":
		return "%"
	}
	return u
}

// toMillis is the factor from a unit of time to milliseconds.
func toMillis(unit string) (float64, bool) {
	switch unit {
	case "s":
		return 1000, true
	case "ms":
		return 1, true
	case "us", "µs":
		return 0.001, true
	}
	return 0, false
}

// promHistogram turns a Prometheus histogram into an operation's latency
// figures. A percentile is the upper bound of the bucket it falls in (a
// bound is all a bucket knows), and the buckets become the HdrHistogram
// that parallel load generators' results merge with, each count at its
// bucket's bound: so a merged percentile is again a bucket's bound.
func (c *collector) promHistogram(loc, op string, h *dto.Histogram, scale float64) {
	n := float64(h.GetSampleCount())
	c.add(loc, "", "", results.Metric{Name: "operations", Operation: op, Value: n, Unit: "count", Direction: results.Neutral, Detail: true})
	if n == 0 {
		return
	}
	c.add(loc, "", "", results.Metric{Name: "latencyAverageMillis", Operation: op, Value: h.GetSampleSum() * scale / n, Unit: "ms",
		Direction: results.LowerIsBetter, Detail: true})
	buckets := append([]*dto.Bucket(nil), h.GetBucket()...)
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].GetUpperBound() < buckets[j].GetUpperBound() })
	for _, p := range histogramMetrics {
		rank := math.Ceil(p.q / 100 * n)
		bound := math.Inf(1)
		for _, b := range buckets {
			if float64(b.GetCumulativeCount()) >= rank {
				bound = b.GetUpperBound()
				break
			}
		}
		if math.IsInf(bound, 1) {
			c.r.Warnings = append(c.r.Warnings, fmt.Sprintf("%s: p%g of %s lies above the largest bucket bound: not reported (add larger buckets)", loc, p.q, op))
			continue
		}
		c.add(loc, "", "", results.Metric{Name: p.name, Operation: op, Value: bound * scale, Unit: "ms", Direction: results.LowerIsBetter, Detail: p.detail})
	}
	if hist, why := bucketHistogram(buckets, h.GetSampleCount(), scale); why != "" {
		c.r.Warnings = append(c.r.Warnings, fmt.Sprintf("%s: the buckets of %s are not kept as a histogram (%s): merged with other load generators, its percentiles are upper bounds", loc, op, why))
	} else {
		c.bucketed[op] = true
		c.histogram(loc, op, hist)
	}
}

// bucketHistogram records each bucket's count at its upper bound, in µs.
func bucketHistogram(buckets []*dto.Bucket, total uint64, scale float64) (*hdr.Histogram, string) {
	h := results.NewHistogram()
	var below uint64
	for _, b := range buckets {
		count := b.GetCumulativeCount() - min(below, b.GetCumulativeCount())
		below = max(below, b.GetCumulativeCount())
		if count == 0 {
			continue
		}
		if math.IsInf(b.GetUpperBound(), 1) {
			return nil, "some values lie above the largest finite bound"
		}
		us := max(math.Ceil(b.GetUpperBound()*scale*1000), 1)
		if err := h.RecordValues(int64(us), int64(count)); err != nil {
			return nil, fmt.Sprintf("a bound of %g ms is beyond an hour", b.GetUpperBound()*scale)
		}
	}
	if below < total {
		return nil, "some values lie above the largest bound"
	}
	return h, ""
}

// promSummary turns a summary's quantiles into an operation's percentiles.
func (c *collector) promSummary(loc, op string, s *dto.Summary, scale float64) {
	n := float64(s.GetSampleCount())
	c.add(loc, "", "", results.Metric{Name: "operations", Operation: op, Value: n, Unit: "count", Direction: results.Neutral, Detail: true})
	if n > 0 {
		c.add(loc, "", "", results.Metric{Name: "latencyAverageMillis", Operation: op, Value: s.GetSampleSum() * scale / n, Unit: "ms",
			Direction: results.LowerIsBetter, Detail: true})
	}
	for _, q := range s.GetQuantile() {
		if !finite(q.GetValue()) || q.GetQuantile() <= 0 || q.GetQuantile() > 1 {
			continue // NaN before the first observation
		}
		name := percentileName(q.GetQuantile())
		c.add(loc, "", "", results.Metric{Name: name, Operation: op, Value: q.GetValue() * scale, Unit: "ms", Direction: results.LowerIsBetter,
			Detail: name != "latencyP99Millis"})
	}
}

// percentileName names a quantile's metric as every parser does: 0.99
// latencyP99Millis, 0.999 latencyP999Millis (results.PercentileOfName
// reads it back).
func percentileName(q float64) string {
	p := math.Round(100*q*1e4) / 1e4 // 0.55 → 55, not 55.00000000000001
	digits := strconv.FormatFloat(p, 'f', -1, 64)
	if p >= 10 {
		// 99.9 → "999", 55.5 → "555": PercentileOfName reads the first
		// two digits as the whole part.
		digits = strings.Replace(digits, ".", "", 1)
	}
	// Below 10 a fraction keeps its point (0.1 → "0.1", 5.5 → "5.5"):
	// without it 0.1 and 1 would both be "1".
	return "latencyP" + digits + "Millis"
}

// operationOf is the operation a sample's labels name: the label
// operation, then the other labels (le and quantile aside) as k=v.
func operationOf(labels []*dto.LabelPair) string {
	op := ""
	var rest []string
	for _, l := range labels {
		switch l.GetName() {
		case "operation":
			op = l.GetValue()
		case "le", "quantile":
		default:
			rest = append(rest, l.GetName()+"="+l.GetValue())
		}
	}
	sort.Strings(rest)
	if len(rest) > 0 && op != "" {
		op += ","
	}
	return op + strings.Join(rest, ",")
}

func labelText(labels []*dto.LabelPair) string {
	if len(labels) == 0 {
		return ""
	}
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = fmt.Sprintf("%s=%q", l.GetName(), l.GetValue())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func orNone(unit string) string {
	if unit == "" {
		return "no unit"
	}
	return "unit " + unit
}

// exposition is the OpenMetrics text made readable by the Prometheus text
// parser, with what only OpenMetrics says set aside.
type exposition struct {
	text []byte
	// units from # UNIT lines, by family name as the parser names it.
	units map[string]string
	// lines is each family's first line (its # TYPE or first sample).
	lines    map[string]int
	warnings []string
	// problems are lines set aside as malformed.
	problems []string
}

// readExposition finds the exposition (in the output, from its first
// # TYPE or # HELP line to # EOF; a file is one) and normalizes it.
func readExposition(src source) (*exposition, bool) {
	all := workloads.Lines(src.data)
	start := 0
	if !src.file {
		start = -1
		for i, l := range all {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "# TYPE ") || strings.HasPrefix(t, "# HELP ") {
				start = i
				break
			}
		}
		if start < 0 {
			return nil, false
		}
	}
	out := make([]string, len(all))
	for i := start; i < len(all); i++ {
		if strings.TrimSpace(all[i]) == "# EOF" {
			break
		}
		out[i] = all[i]
	}
	return normalize(out), true
}
