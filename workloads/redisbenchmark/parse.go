package redisbenchmark

import (
	"encoding/csv"
	"regexp"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

var (
	reSection  = regexp.MustCompile(`^====== (.+) ======$`)
	reThroughp = regexp.MustCompile(`^throughput summary: ([0-9.]+) requests per second`)
	reQuiet    = regexp.MustCompile(`^([A-Za-z_ ()0-9:-]+): ([0-9.]+) requests per second(?:, p50=([0-9.]+) msec)?`)
	reLatHead  = regexp.MustCompile(`^avg\s+min\s+p50\s+p95\s+p99\s+max$`)
)

var csvColumns = map[string]results.Metric{
	"rps":            {Name: "opsPerSecond", Unit: "ops/s", Direction: results.HigherIsBetter},
	"avg_latency_ms": {Name: "latencyAverageMillis", Unit: "ms", Direction: results.LowerIsBetter},
	"min_latency_ms": {Name: "latencyMinMillis", Unit: "ms", Direction: results.LowerIsBetter},
	"p50_latency_ms": {Name: "latencyP50Millis", Unit: "ms", Direction: results.LowerIsBetter},
	"p95_latency_ms": {Name: "latencyP95Millis", Unit: "ms", Direction: results.LowerIsBetter},
	"p99_latency_ms": {Name: "latencyP99Millis", Unit: "ms", Direction: results.LowerIsBetter},
	"max_latency_ms": {Name: "latencyMaxMillis", Unit: "ms", Direction: results.LowerIsBetter},
}

var textColumns = []string{"avg_latency_ms", "min_latency_ms", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms", "max_latency_ms"}

// Parse reads redis-benchmark's CSV, full text or quiet (-q) output.
func (RedisBenchmark) Parse(in workloads.ParseInput) *results.Result {
	r := results.New("redis-benchmark")
	lines := workloads.Lines(in.Output)
	var tests []string
	var header []string
	section, expectLatency := "", false
	for i, raw := range lines {
		l := strings.TrimSpace(raw)
		switch {
		case l == "":
		case strings.HasPrefix(l, `"test",`):
			header = readCSV(l)
		case header != nil && strings.HasPrefix(l, `"`):
			if rec := readCSV(l); len(rec) == len(header) {
				tests = append(tests, rec[0])
				for j, col := range header[1:] {
					addValue(r, rec[0], col, rec[j+1])
				}
			}
		case reSection.MatchString(l):
			section = reSection.FindStringSubmatch(l)[1]
		case reThroughp.MatchString(l) && section != "":
			tests = append(tests, section)
			addValue(r, section, "rps", reThroughp.FindStringSubmatch(l)[1])
		case reLatHead.MatchString(l):
			expectLatency = true
		case expectLatency && section != "":
			for j, f := range strings.Fields(l) {
				if j < len(textColumns) {
					addValue(r, section, textColumns[j], f)
				}
			}
			expectLatency = false
		case strings.Contains(l, "replied with error"), strings.HasPrefix(l, "Could not connect"),
			strings.HasPrefix(l, "Error:"), strings.HasPrefix(l, "ERR"):
			reason := l
			if strings.Contains(l, "replied with error") && i+1 < len(lines) {
				reason += " " + strings.TrimSpace(lines[i+1])
			}
			r.Fail("redis-benchmark stopped on an error: %s", reason)
		default:
			if m := reQuiet.FindStringSubmatch(l); m != nil && header == nil {
				tests = append(tests, m[1])
				addValue(r, m[1], "rps", m[2])
				if m[3] != "" {
					addValue(r, m[1], "p50_latency_ms", m[3])
				}
			}
		}
	}
	if len(tests) == 0 {
		r.Fail("redis-benchmark printed no results")
	} else {
		r.Primary = results.Key{Name: "opsPerSecond", Operation: tests[0]}
		r.SetParam("tests", strings.Join(tests, ","))
		for _, test := range tests {
			ops, _ := r.Get(results.Key{Name: "opsPerSecond", Operation: test})
			workloads.RequireWork(r, ops.Value, "request of test "+test)
		}
	}
	workloads.JudgeExitCode(r, "redis-benchmark", in.ExitCode)
	return r
}

func readCSV(line string) []string {
	rec, err := csv.NewReader(strings.NewReader(line)).Read()
	if err != nil {
		return nil
	}
	return rec
}

func addValue(r *results.Result, test, column, text string) {
	m, ok := csvColumns[column]
	if !ok {
		return
	}
	v, ok := workloads.Float(text)
	if !ok {
		return
	}
	m.Operation, m.Value = test, v
	r.Add(m)
}

// FatalOutput arms dbperf-runner's no-progress watchdog (runner.FatalOutput):
// redis-benchmark 7 that cannot connect prints "Could not connect to Redis
// at …" and "WARNING: Could not fetch server CONFIG", then waits forever
// for clients that never connect (found against a port nothing listens on).
func (RedisBenchmark) FatalOutput(line string) bool {
	return strings.HasPrefix(line, "Could not connect to Redis at")
}
