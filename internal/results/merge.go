package results

import (
	"encoding/base64"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram limits: latencies are recorded in microseconds from 1 µs to
// one hour at 3 significant digits (0.1 % resolution).
const (
	histLowest  = 1
	histHighest = 3_600_000_000
	histDigits  = 3
)

// NewHistogram returns an empty latency histogram in microseconds.
func NewHistogram() *hdr.Histogram { return hdr.New(histLowest, histHighest, histDigits) }

// EncodeHistogram is the compressed HdrHistogram encoding (V2, as the Java
// and Go libraries write it), in base64: what a result carries per operation.
func EncodeHistogram(h *hdr.Histogram) (string, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// DecodeHistogram reverses EncodeHistogram.
func DecodeHistogram(s string) (*hdr.Histogram, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	return hdr.Decode(b)
}

// SetHistogram stores the latency histogram (µs) of an operation.
func (r *Result) SetHistogram(operation string, h *hdr.Histogram) error {
	enc, err := EncodeHistogram(h)
	if err != nil {
		return err
	}
	if r.Histograms == nil {
		r.Histograms = map[string]string{}
	}
	r.Histograms[operation] = enc
	return nil
}

// PercentileOfName is the percentile a metric name's digits stand for, the
// decimal point dropped after the first two digits as every tool's
// parser names them: "50" 50, "99" 99, "999" 99.9, "9999" 99.99, "995"
// 99.5, "100" 100.
func PercentileOfName(digits string) float64 {
	if strings.Contains(digits, ".") || len(digits) <= 2 || digits == "100" {
		q, _ := strconv.ParseFloat(digits, 64)
		return q
	}
	q, _ := strconv.ParseFloat(digits[:2]+"."+digits[2:], 64)
	return q
}

// percentileName matches latency percentile metrics: latencyP99Millis,
// latencyP99.9Millis; their value is recomputed from merged histograms.
var percentileName = regexp.MustCompile(`^latencyP([0-9]+(?:\.[0-9]+)?)(UpperBound)?Millis$`)

// Merge combines the results of load generators that measured together.
// Throughputs and counts add up; minimum and maximum are the extremes; an
// average latency is weighted by each generator's operations (or its
// throughput). Percentiles are never averaged: when every generator carries
// a histogram of the operation they are computed from the merged histogram
// (exact to its 0.1 % resolution); otherwise the largest generator's value
// is reported as an upper bound (latencyP99UpperBoundMillis) — a quantile of
// the union never exceeds the largest quantile of its parts. The verdict is
// the worst, and every reason names its generator.
func Merge(parts []*Result) *Result {
	if len(parts) == 1 {
		return parts[0]
	}
	first := parts[0]
	out := New(first.Tool)
	out.ToolVersion, out.Primary, out.ExitCode = first.ToolVersion, first.Primary, first.ExitCode
	out.SetParam("loadGenerators", strconv.Itoa(len(parts)))
	for k, v := range first.Parameters {
		out.SetParam(k, v)
	}
	for i, p := range parts {
		switch p.Verdict {
		case Failed:
			for _, reason := range p.Reasons {
				out.Fail("load generator %d: %s", i, reason)
			}
		case Invalid:
			for _, reason := range p.Reasons {
				out.Invalidate("load generator %d: %s", i, reason)
			}
		}
		for _, w := range p.Warnings {
			out.Warnings = append(out.Warnings, fmt.Sprintf("load generator %d: %s", i, w))
		}
		if p.ExitCode != nil && *p.ExitCode != 0 {
			out.ExitCode = p.ExitCode
		}
		out.Disturbances = append(out.Disturbances, p.Disturbances...) // the first generator's only
		out.Restarts = mergeRestarts(out.Restarts, p.Restarts)
		if out.ServerSettings == nil {
			out.ServerSettings = p.ServerSettings // the first generator's: it reads the server
		}
		if out.Diagnostics == nil {
			out.Diagnostics = p.Diagnostics
		}
		if p.StartTime != nil && (out.StartTime == nil || p.StartTime.Before(*out.StartTime)) {
			out.StartTime = p.StartTime
		}
		if p.EndTime != nil && (out.EndTime == nil || p.EndTime.After(*out.EndTime)) {
			out.EndTime = p.EndTime
		}
	}
	out.LoadGenerator = mergeLoadGenerators(parts)
	for _, p := range parts {
		out.Series = append(out.Series, p.Series...)
	}
	mergeTimeSeries(out, parts)
	mergeStages(out, parts)

	merged := mergeHistograms(parts)
	for op, h := range merged {
		if err := out.SetHistogram(op, h); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("histogram of %s not kept: %v", op, err))
		}
	}
	var keys []Key
	byKey := map[Key][]Metric{}
	for _, p := range parts {
		for _, m := range p.Metrics {
			if _, ok := byKey[m.Key()]; !ok {
				keys = append(keys, m.Key())
			}
			byKey[m.Key()] = append(byKey[m.Key()], m)
		}
	}
	upper := false
	for _, k := range keys {
		ms := byKey[k]
		m := ms[0]
		if m.IsTelemetry() {
			// The servers' side is measured once per measurement (by the
			// first load generator, or by the operator): never added up.
			out.Add(m)
			continue
		}
		if len(ms) < len(parts) {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s was reported by %d of %d load generators", k, len(ms), len(parts)))
		}
		if pm := percentileName.FindStringSubmatch(m.Name); pm != nil {
			if h, ok := merged[m.Operation]; ok && pm[2] == "" {
				m.Value = float64(h.ValueAtPercentile(PercentileOfName(pm[1]))) / 1000
				out.Add(m)
				continue
			}
			m.Value = maxOf(ms)
			if pm[2] == "" {
				m.Name = "latencyP" + pm[1] + "UpperBoundMillis"
				upper = true
			}
			out.Add(m)
			continue
		}
		switch {
		case m.Name == "latencyMinMillis" || m.Name == "min":
			m.Value = minOf(ms)
			if h, ok := merged[m.Operation]; ok && m.Name == "latencyMinMillis" {
				m.Value = float64(h.Min()) / 1000
			}
		case strings.HasPrefix(m.Name, "latency") && (strings.Contains(m.Name, "Avg") || strings.Contains(m.Name, "Average")) ||
			strings.HasPrefix(m.Name, "latencyMean") || m.Name == "errorPercent":
			// Averages and shares of failed requests: weighted by each
			// generator's operations (exact from a merged histogram).
			m.Value = weightedMean(parts, m)
			if h, ok := merged[m.Operation]; ok && m.Name != "errorPercent" {
				m.Value = h.Mean() / 1000
			}
		case m.Name == "latencyMaxMillis" || m.Name == "max" || m.Name == "loadGeneratorCPUPeakPercent" || m.Unit == "s" || m.Unit == "%":
			m.Value = maxOf(ms)
		case strings.HasPrefix(m.Name, "latency") || m.Unit == "ms":
			// Other latency statistics (standard deviation) cannot be
			// combined without the samples: the largest is an upper bound.
			m.Value = maxOf(ms)
		default:
			// Throughputs (x/s), counts, NOPM/TPM: the generators' work adds up.
			m.Value = sumOf(ms)
		}
		out.Add(m)
	}
	if upper {
		out.Warnings = append(out.Warnings, "some load generators reported percentiles without a histogram: the merged percentiles are upper bounds (the largest generator's), since percentiles cannot be averaged")
	}
	if out.Primary.Name != "" {
		if _, ok := out.Get(out.Primary); !ok {
			if pm := percentileName.FindStringSubmatch(out.Primary.Name); pm != nil && pm[2] == "" {
				out.Primary.Name = "latencyP" + pm[1] + "UpperBoundMillis"
			}
		}
	}
	return out
}

// mergeHistograms merges, per operation, the histograms every generator
// carries; an operation one generator lacks has none.
func mergeHistograms(parts []*Result) map[string]*hdr.Histogram {
	out := map[string]*hdr.Histogram{}
	ops := map[string]int{}
	for _, p := range parts {
		for op := range p.Histograms {
			ops[op]++
		}
	}
	for op, n := range ops {
		if n != len(parts) {
			continue
		}
		sum := NewHistogram()
		ok := true
		for _, p := range parts {
			h, err := DecodeHistogram(p.Histograms[op])
			if err != nil {
				ok = false
				break
			}
			if dropped := sum.Merge(h); dropped > 0 {
				ok = false
				break
			}
		}
		if ok {
			out[op] = sum
		}
	}
	return out
}

func mergeLoadGenerators(parts []*Result) *LoadGenerator {
	var out *LoadGenerator
	for _, p := range parts {
		lg := p.LoadGenerator
		if lg == nil {
			continue
		}
		if out == nil {
			c := *lg
			out = &c
			continue
		}
		// The busiest generator decides whether the set was saturated.
		if lg.CPUPercent > out.CPUPercent {
			out.CPUPercent, out.AvailableCPUs, out.Source = lg.CPUPercent, lg.AvailableCPUs, lg.Source
		}
		out.CPUSeconds += lg.CPUSeconds
		out.WallSeconds = max(out.WallSeconds, lg.WallSeconds)
		out.RunnerCPUSeconds += lg.RunnerCPUSeconds
	}
	return out
}

// weight of a generator's metrics for an operation: its operation count,
// else its throughput, else 1.
func weight(r *Result, op string) float64 {
	for _, name := range []string{"operations", "calls", "requests", "transactions"} {
		if m, ok := r.Get(Key{Name: name, Operation: op}); ok && m.Value > 0 {
			return m.Value
		}
	}
	for _, m := range r.Metrics {
		if m.Operation == op && strings.HasSuffix(m.Unit, "/s") && m.Value > 0 {
			return m.Value
		}
	}
	return 1
}

func weightedMean(parts []*Result, m Metric) float64 {
	var sum, w float64
	for _, p := range parts {
		if pm, ok := p.Get(m.Key()); ok {
			wt := weight(p, m.Operation)
			sum += wt * pm.Value
			w += wt
		}
	}
	if w == 0 {
		return math.NaN()
	}
	return sum / w
}

func sumOf(ms []Metric) float64 {
	s := 0.0
	for _, m := range ms {
		s += m.Value
	}
	return s
}

func maxOf(ms []Metric) float64 {
	v := math.Inf(-1)
	for _, m := range ms {
		v = math.Max(v, m.Value)
	}
	return v
}

func minOf(ms []Metric) float64 {
	v := math.Inf(1)
	for _, m := range ms {
		v = math.Min(v, m.Value)
	}
	return v
}

// HistogramOperations lists the operations with a histogram, sorted.
func (r *Result) HistogramOperations() []string {
	ops := make([]string, 0, len(r.Histograms))
	for op := range r.Histograms {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return ops
}

// mergeRestarts: the generators' tools together ended first when the
// first ended, and resumed when the last resumed, if all did.
func mergeRestarts(a, b *Restarts) *Restarts {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		c := *b
		return &c
	case b == nil:
		return a
	}
	return &Restarts{Runs: max(a.Runs, b.Runs), EndedSeconds: min(a.EndedSeconds, b.EndedSeconds),
		ResumedSeconds: max(a.ResumedSeconds, b.ResumedSeconds), Resumed: a.Resumed && b.Resumed}
}
