// Package k6 parses the results of Grafana k6: the JSON of
// --summary-export (legacy flat shape, where a threshold's true means
// crossed) and of handleSummary (k6 ≥ 1.0: type/contains/values, a
// threshold's ok false means crossed), and the end-of-test text summary
// (legacy and v1 compact). Thresholds are reported pass/fail; exit code 99
// is "thresholds crossed" (the measurement is Invalid), not a crash.
package k6

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Parser implements workloads.Parser for k6.
type Parser struct{}

// ExitThresholdsCrossed is k6's exit code when thresholds failed.
const ExitThresholdsCrossed = 99

// metric is one k6 metric in any of the three shapes.
type metric struct {
	kind      string // trend, counter, rate, gauge
	values    map[string]float64
	crossed   []string
	satisfied []string
}

// Parse reads a summary JSON from the result files (or the output when it is
// JSON), else the text summary in the output.
func (Parser) Parse(in workloads.ParseInput) *results.Result {
	r := results.New("k6")
	var ms map[string]*metric
	var err error
	src := ""
	for name, raw := range in.Files {
		if ms, err = parseJSON(raw); err == nil {
			src = name
			break
		}
	}
	if ms == nil {
		if t := strings.TrimSpace(string(in.Output)); strings.HasPrefix(t, "{") {
			ms, err = parseJSON(in.Output)
			src = "output"
		}
	}
	if ms == nil {
		ms = parseText(string(in.Output))
		src = "text summary"
	}
	if len(ms) == 0 {
		r.Fail("no k6 end-of-test summary (text, --summary-export or handleSummary JSON)")
		if err != nil {
			r.Fail("summary JSON: %v", err)
		}
		exitCode(r, in.ExitCode)
		return r
	}
	r.SetParam("summarySource", src)
	build(r, ms)
	judgeScriptErrors(r, in.Output)
	exitCode(r, in.ExitCode)
	return r
}

// reLogError is a line k6 logs at level error: an exception a script's
// iteration threw ("Uncaught (in promise) WRONGPASS …"), or its
// console.error.
var reLogError = regexp.MustCompile(`level=error msg="((?:[^"\\]|\\.)*)"`)

// judgeScriptErrors judges the errors k6 logged: an iteration that threw
// is counted complete by k6, and its requests may never have been made (a
// wrong password: every Redis call rejected), so a run whose every
// iteration logged an error failed, and one with some is not to be
// trusted. Both say how many and the first.
func judgeScriptErrors(r *results.Result, output []byte) {
	n, first := 0, ""
	for _, l := range workloads.Lines(output) {
		m := reLogError.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if n == 0 {
			first = m[1]
			if u, err := strconv.Unquote(`"` + m[1] + `"`); err == nil {
				first = u
			}
		}
		n++
	}
	if n == 0 {
		return
	}
	iterations := 0.0
	if c, ok := r.Get(results.Key{Name: "count", Operation: "iterations"}); ok {
		iterations = c.Value
	}
	switch {
	case iterations > 0 && float64(n) >= iterations:
		r.Fail("every iteration logged an error (%d errors in %.0f iterations), the first: %s", n, iterations, first)
	default:
		r.Invalidate("the script logged %d errors in %.0f iterations, the first: %s", n, iterations, first)
	}
}

// exitCode judges k6's exit code as every tool's is judged, except 99:
// thresholds crossed make the measurement Invalid, not a crash.
func exitCode(r *results.Result, code *int) {
	if code != nil && *code == ExitThresholdsCrossed {
		c := *code
		r.ExitCode = &c
		r.Invalidate("k6 exited with code 99: thresholds crossed")
		return
	}
	workloads.JudgeExitCode(r, "k6", code)
}

// detail metrics: HTTP timing phases and the like.
var detail = map[string]bool{"http_req_blocked": true, "http_req_connecting": true, "http_req_tls_handshaking": true,
	"http_req_sending": true, "http_req_waiting": true, "http_req_receiving": true, "group_duration": true, "vus": true, "vus_max": true}

func build(r *results.Result, ms map[string]*metric) {
	names := make([]string, 0, len(ms))
	for n := range ms {
		names = append(names, n)
	}
	sort.Strings(names)
	switch {
	case ms["http_reqs"] != nil:
		r.Primary = results.Key{Name: "requestsPerSecond", Operation: "http_reqs"}
	case ms["iterations"] != nil:
		r.Primary = results.Key{Name: "iterationsPerSecond", Operation: "iterations"}
	}
	var crossed []string
	for _, n := range names {
		m := ms[n]
		base := n
		sub := strings.Contains(n, "{")
		isDetail := detail[n] || sub
		for _, c := range m.crossed {
			crossed = append(crossed, n+": "+c)
		}
		if len(m.crossed)+len(m.satisfied) > 0 {
			r.Add(results.Metric{Name: "thresholdsCrossed", Operation: base, Value: float64(len(m.crossed)), Unit: "count", Direction: results.LowerIsBetter})
		}
		switch m.kind {
		case "trend":
			unit := 1.0 // k6 trends of time are in ms
			for _, p := range []struct{ key, name string }{{"avg", "latencyAverageMillis"}, {"min", "latencyMinMillis"}, {"med", "latencyP50Millis"},
				{"max", "latencyMaxMillis"}, {"p(90)", "latencyP90Millis"}, {"p(95)", "latencyP95Millis"}, {"p(99)", "latencyP99Millis"},
				{"p(99.9)", "latencyP999Millis"}, {"p(99.99)", "latencyP9999Millis"}} {
				if v, ok := m.values[p.key]; ok {
					r.Add(results.Metric{Name: p.name, Operation: base, Value: v * unit, Unit: "ms", Direction: results.LowerIsBetter,
						Detail: isDetail || p.key == "min" || p.key == "max"})
				}
			}
		case "counter":
			name := "ratePerSecond"
			unit := "/s"
			dir := results.Neutral
			switch n {
			case "http_reqs":
				name, unit, dir = "requestsPerSecond", "req/s", results.HigherIsBetter
			case "iterations":
				name, unit, dir = "iterationsPerSecond", "it/s", results.HigherIsBetter
			case "data_received", "data_sent":
				name, unit = "bytesPerSecond", "B/s"
			}
			if v, ok := m.values["rate"]; ok {
				r.Add(results.Metric{Name: name, Operation: n, Value: v, Unit: unit, Direction: dir, Detail: isDetail})
			}
			if v, ok := m.values["count"]; ok {
				r.Add(results.Metric{Name: "count", Operation: n, Value: v, Unit: "count", Direction: results.Neutral, Detail: true})
			}
		case "rate":
			v, ok := m.values["rate"]
			if !ok {
				continue
			}
			switch n {
			case "http_req_failed":
				r.Add(results.Metric{Name: "errorPercent", Value: 100 * v, Unit: "%", Direction: results.LowerIsBetter})
			case "checks":
				r.Add(results.Metric{Name: "checksFailedPercent", Value: 100 * (1 - v), Unit: "%", Direction: results.LowerIsBetter})
			default:
				r.Add(results.Metric{Name: "ratePercent", Operation: n, Value: 100 * v, Unit: "%", Direction: results.Neutral, Detail: isDetail})
			}
		case "gauge":
			if v, ok := m.values["max"]; ok {
				if n == "vus" || n == "vus_max" {
					// VUs of concurrent load generators add up.
					r.Add(results.Metric{Name: "virtualUsers", Operation: n, Value: v, Unit: "count", Direction: results.Neutral, Detail: true})
					continue
				}
				r.Add(results.Metric{Name: "max", Operation: n, Value: v, Unit: "", Direction: results.Neutral, Detail: true})
			}
		}
	}
	if len(crossed) > 0 {
		sort.Strings(crossed)
		r.Invalidate("thresholds crossed: %s", strings.Join(crossed, "; "))
	}
	if r.Primary.Name == "" {
		r.Warnings = append(r.Warnings, "no http_reqs or iterations counter: no primary metric")
	} else if n, ok := r.Get(results.Key{Name: "count", Operation: r.Primary.Operation}); ok {
		workloads.RequireWork(r, n.Value, strings.TrimSuffix(r.Primary.Operation, "s"))
	}
	workloads.RequireSuccess(r)
}

// parseJSON reads either summary JSON shape.
func parseJSON(raw []byte) (map[string]*metric, error) {
	var doc struct {
		Metrics map[string]json.RawMessage `json:"metrics"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if len(doc.Metrics) == 0 {
		return nil, fmt.Errorf("no metrics")
	}
	out := map[string]*metric{}
	for name, rawM := range doc.Metrics {
		var generic map[string]json.RawMessage
		if err := json.Unmarshal(rawM, &generic); err != nil {
			return nil, fmt.Errorf("metric %s: %w", name, err)
		}
		m := &metric{values: map[string]float64{}}
		if v, ok := generic["values"]; ok { // handleSummary (k6 ≥ 1.0)
			_ = json.Unmarshal(generic["type"], &m.kind)
			_ = json.Unmarshal(v, &m.values)
			var th map[string]struct {
				OK bool `json:"ok"`
			}
			_ = json.Unmarshal(generic["thresholds"], &th)
			for expr, t := range th {
				if t.OK {
					m.satisfied = append(m.satisfied, expr)
				} else {
					m.crossed = append(m.crossed, expr)
				}
			}
		} else { // --summary-export (legacy): flat values; threshold true = crossed
			for k, v := range generic {
				var f float64
				if k == "thresholds" {
					var th map[string]bool
					_ = json.Unmarshal(v, &th)
					for expr, isCrossed := range th {
						if isCrossed {
							m.crossed = append(m.crossed, expr)
						} else {
							m.satisfied = append(m.satisfied, expr)
						}
					}
					continue
				}
				if json.Unmarshal(v, &f) == nil {
					m.values[k] = f
				}
			}
			m.kind = legacyKind(m.values)
			if m.kind == "rate" {
				m.values["rate"] = m.values["value"]
			}
		}
		sort.Strings(m.crossed)
		out[name] = m
	}
	return out, nil
}

func legacyKind(v map[string]float64) string {
	_, avg := v["avg"]
	_, passes := v["passes"]
	_, count := v["count"]
	_, rate := v["rate"]
	_, min := v["min"]
	switch {
	case avg:
		return "trend"
	case passes:
		return "rate"
	case count && rate:
		return "counter"
	case min:
		return "gauge"
	}
	return ""
}

var (
	textLine  = regexp.MustCompile(`^\s*([a-zA-Z_][\w]*(?:\{[^}]*\})?)\.{2,}:\s*(.+)$`)
	subLine   = regexp.MustCompile(`^\s*\{\s*([^}]*)\s*\}\.{2,}:\s*(.+)$`)
	kv        = regexp.MustCompile(`([a-z()0-9.]+)=(\S+)`)
	threshold = regexp.MustCompile(`^\s*([✓✗])\s+'([^']+)'`)
	durPart   = regexp.MustCompile(`([0-9.]+)(µs|us|ms|h|m|s)`)
	counterRx = regexp.MustCompile(`^([0-9.]+)\s*(?:[kMGT]?B)?\s+([0-9.]+)\s*(?:[kMGT]?B)?/s`)
)

// parseText reads the end-of-test text summary; a later summary in the same
// output (a second run) overrides an earlier one.
func parseText(out string) map[string]*metric {
	ms := map[string]*metric{}
	thresholdsFor := ""
	inThresholds := false
	lastMetric := ""
	for _, line := range workloads.Lines([]byte(out)) {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.Contains(trimmed, "█ THRESHOLDS"):
			inThresholds = true
			continue
		case strings.HasPrefix(trimmed, "█ "):
			inThresholds = false
		}
		if inThresholds {
			if m := threshold.FindStringSubmatch(line); m != nil && thresholdsFor != "" {
				x := ms[thresholdsFor]
				if x == nil {
					x = &metric{values: map[string]float64{}}
					ms[thresholdsFor] = x
				}
				if m[1] == "✗" {
					x.crossed = appendUnique(x.crossed, m[2])
				} else {
					x.satisfied = appendUnique(x.satisfied, m[2])
				}
			} else if trimmed != "" && !strings.ContainsAny(trimmed, "'✓✗") {
				thresholdsFor = trimmed
			}
			continue
		}
		name, rest := "", ""
		if m := textLine.FindStringSubmatch(line); m != nil {
			name, rest = m[1], m[2]
			lastMetric = name
		} else if m := subLine.FindStringSubmatch(line); m != nil && lastMetric != "" {
			name, rest = lastMetric+"{"+strings.ReplaceAll(m[1], " ", "")+"}", m[2]
		} else {
			continue
		}
		x := ms[name]
		if x == nil {
			x = &metric{values: map[string]float64{}}
			ms[name] = x
		}
		// Legacy summaries mark thresholds on the metric line: "✗ http_req_duration..."
		rest = strings.TrimSpace(rest)
		switch {
		case strings.Contains(rest, "avg="):
			x.kind = "trend"
			for _, p := range kv.FindAllStringSubmatch(rest, -1) {
				if v, ok := duration(p[2]); ok {
					x.values[p[1]] = v
				}
			}
		case strings.Contains(rest, "%"):
			x.kind = "rate"
			f := strings.Fields(rest)
			if v, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64); err == nil {
				x.values["rate"] = v / 100
			}
		case strings.Contains(rest, "min=") && strings.Contains(rest, "max="):
			x.kind = "gauge"
			for _, p := range kv.FindAllStringSubmatch(rest, -1) {
				if v, err := strconv.ParseFloat(p[2], 64); err == nil {
					x.values[p[1]] = v
				}
			}
		default:
			if m := counterRx.FindStringSubmatch(rest); m != nil {
				x.kind = "counter"
				x.values["count"], _ = strconv.ParseFloat(m[1], 64)
				x.values["rate"], _ = strconv.ParseFloat(m[2], 64)
				if strings.Contains(rest, "B ") || strings.Contains(rest, "B/s") {
					// data_received "57 MB 862 kB/s": sizes with units; keep the rate in B/s.
					x.values["rate"] = bytesPerSecond(rest)
					delete(x.values, "count")
				}
			}
		}
	}
	// Only metrics with values count as a summary.
	for n, x := range ms {
		if len(x.values) == 0 && len(x.crossed)+len(x.satisfied) == 0 {
			delete(ms, n)
		}
	}
	if !hasValues(ms) {
		return nil
	}
	return ms
}

func hasValues(ms map[string]*metric) bool {
	for _, x := range ms {
		if len(x.values) > 0 {
			return true
		}
	}
	return false
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// duration reads k6's formatted durations ("504.4µs", "2.02s", "1m2.5s") in ms.
func duration(s string) (float64, bool) {
	parts := durPart.FindAllStringSubmatch(s, -1)
	if len(parts) == 0 {
		return 0, false
	}
	total := 0.0
	for _, p := range parts {
		v, err := strconv.ParseFloat(p[1], 64)
		if err != nil {
			return 0, false
		}
		switch p[2] {
		case "µs", "us":
			total += v / 1000
		case "ms":
			total += v
		case "s":
			total += v * 1000
		case "m":
			total += v * 60000
		case "h":
			total += v * 3600000
		}
	}
	return total, true
}

var sizeRate = regexp.MustCompile(`([0-9.]+)\s*([kMGT]?)B/s`)

func bytesPerSecond(s string) float64 {
	m := sizeRate.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	mult := map[string]float64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[m[2]]
	return v * mult
}
