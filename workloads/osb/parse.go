// Package osb is OpenSearch Benchmark against the target cluster
// (--pipeline=benchmark-only): the execute-test (1.x) or run (2.x)
// invocation, and the parser of its summary — the Markdown table printed and
// written with --results-format=markdown, the CSV one, or test_execution.json —
// per task throughput (min/mean/median/max), latency and service-time
// percentiles and error rate.
package osb

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Parser implements workloads.Parser for OpenSearch Benchmark.
type Parser struct{}

type row struct {
	metric, task, unit string
	value              float64
}

var percentileRow = regexp.MustCompile(`^([0-9.]+)th percentile (latency|service time)$`)

// Parse reads the results file if there is one, else the printed table.
func (Parser) Parse(in workloads.ParseInput) *results.Result {
	r := results.New("osb")
	var rows []row
	names := make([]string, 0, len(in.Files))
	for n := range in.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if rows = parseAny(in.Files[n]); len(rows) > 0 {
			r.SetParam("resultsFile", n)
			break
		}
	}
	if len(rows) == 0 {
		rows = parseMarkdown(in.Output)
	}
	failure := firstError(in.Output)
	workloads.JudgeExitCode(r, "opensearch-benchmark", in.ExitCode)
	if failure != "" {
		r.Fail("%s", failure)
	}
	if len(rows) == 0 {
		if failure == "" {
			r.Fail("no OpenSearch Benchmark summary (table, CSV or test_execution.json)")
		}
		return r
	}
	build(r, rows)
	return r
}

func firstError(out []byte) string {
	lines := workloads.Lines(out)
	for n, line := range lines {
		i := strings.Index(line, "[ERROR] ")
		if i < 0 {
			continue
		}
		msg := strings.TrimSpace(line[i+len("[ERROR] "):])
		if !strings.HasPrefix(msg, "Cannot ") && !strings.Contains(msg, "FAILURE") {
			continue
		}
		// The next line usually says why ("Cannot run task …").
		if n+1 < len(lines) {
			if next := strings.TrimSpace(lines[n+1]); next != "" {
				msg += ": " + next
			}
		}
		if len(msg) > 400 {
			msg = msg[:400] + "…"
		}
		return msg
	}
	return ""
}

func parseAny(raw []byte) []row {
	t := bytes.TrimSpace(raw)
	switch {
	case bytes.HasPrefix(t, []byte("{")):
		return parseJSON(t)
	case bytes.HasPrefix(t, []byte("|")) || bytes.Contains(t, []byte("\n|")):
		return parseMarkdown(t)
	default:
		return parseCSV(t)
	}
}

func parseMarkdown(raw []byte) []row {
	var rows []row
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		v, err := strconv.ParseFloat(cells[2], 64)
		if err != nil {
			continue // header and separator
		}
		rows = append(rows, row{metric: cells[0], task: cells[1], value: v, unit: cells[3]})
	}
	return rows
}

func parseCSV(raw []byte) []row {
	recs, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		return nil
	}
	var rows []row
	for _, rec := range recs {
		if len(rec) != 4 {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[2]), 64)
		if err != nil {
			continue
		}
		rows = append(rows, row{metric: strings.TrimSpace(rec[0]), task: strings.TrimSpace(rec[1]), value: v, unit: strings.TrimSpace(rec[3])})
	}
	return rows
}

// parseJSON reads test_execution.json's results.op_metrics.
func parseJSON(raw []byte) []row {
	var doc struct {
		Results struct {
			OpMetrics []opMetric `json:"op_metrics"`
		} `json:"results"`
	}
	if json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	var rows []row
	for _, m := range doc.Results.OpMetrics {
		for _, k := range []string{"min", "mean", "median", "max"} {
			if v, ok := m.Throughput[k].(float64); ok {
				unit, _ := m.Throughput["unit"].(string)
				rows = append(rows, row{metric: strings.ToUpper(k[:1]) + k[1:] + " Throughput", task: m.Task, value: v, unit: unit})
			}
		}
		for kind, vals := range map[string]map[string]any{"latency": m.Latency, "service time": m.ServiceTime} {
			for k, v := range vals {
				f, ok := v.(float64)
				if !ok || k == "mean" || k == "unit" {
					continue
				}
				p := strings.TrimSuffix(strings.ReplaceAll(k, "_", "."), ".0")
				rows = append(rows, row{metric: p + "th percentile " + kind, task: m.Task, value: f, unit: "ms"})
			}
		}
		rows = append(rows, row{metric: "error rate", task: m.Task, value: 100 * m.ErrorRate, unit: "%"})
	}
	return rows
}

type opMetric struct {
	Task        string         `json:"task"`
	Throughput  map[string]any `json:"throughput"`
	Latency     map[string]any `json:"latency"`
	ServiceTime map[string]any `json:"service_time"`
	ErrorRate   float64        `json:"error_rate"`
}

func build(r *results.Result, rows []row) {
	firstTask := ""
	for _, rw := range rows {
		if rw.task == "" {
			// Cluster-level figures (indexing time, merges, GC, store size).
			r.Add(results.Metric{Name: clusterName(rw.metric), Value: rw.value, Unit: rw.unit, Direction: results.Neutral, Detail: true})
			continue
		}
		switch {
		case strings.HasSuffix(rw.metric, " Throughput"):
			kind := strings.ToLower(strings.TrimSuffix(rw.metric, " Throughput"))
			name := "throughput" + strings.ToUpper(kind[:1]) + kind[1:]
			if firstTask == "" && kind == "mean" {
				firstTask = rw.task
			}
			r.Add(results.Metric{Name: name, Operation: rw.task, Value: rw.value, Unit: rw.unit, Direction: results.HigherIsBetter, Detail: kind != "mean"})
		case rw.metric == "error rate":
			r.Add(results.Metric{Name: "errorPercent", Operation: rw.task, Value: rw.value, Unit: "%", Direction: results.LowerIsBetter})
		default:
			if m := percentileRow.FindStringSubmatch(rw.metric); m != nil {
				p := strings.ReplaceAll(strings.TrimSuffix(m[1], ".0"), ".", "")
				base := "latency"
				if m[2] == "service time" {
					base = "serviceTime"
				}
				r.Add(results.Metric{Name: base + "P" + p + "Millis", Operation: rw.task, Value: toMs(rw.value, rw.unit), Unit: "ms",
					Direction: results.LowerIsBetter, Detail: base == "serviceTime" || p == "100"})
			}
		}
	}
	if firstTask != "" {
		r.Primary = results.Key{Name: "throughputMean", Operation: firstTask}
		ops, _ := r.Get(r.Primary)
		workloads.RequireWork(r, ops.Value, "request of task "+firstTask)
	} else {
		r.Warnings = append(r.Warnings, "no task throughput in the summary")
	}
	workloads.RequireSuccess(r)
}

func toMs(v float64, unit string) float64 {
	switch unit {
	case "s":
		return v * 1000
	case "us", "µs":
		return v / 1000
	}
	return v
}

// clusterName turns "Cumulative indexing time of primary shards" into
// "cumulativeIndexingTimeOfPrimaryShards".
func clusterName(s string) string {
	f := strings.Fields(strings.ToLower(s))
	for i := 1; i < len(f); i++ {
		f[i] = strings.ToUpper(f[i][:1]) + f[i][1:]
	}
	return strings.Join(f, "")
}
