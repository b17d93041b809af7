package ycsb

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// row is one "[SECTION], key, value" line of the report.
var row = regexp.MustCompile(`^\[([A-Za-z0-9_%\-]+)\],\s*([^,]+?),\s*(\S+)\s*$`)

// status is a `-s` progress line: "… 12 sec: 3310 operations; 1937 current ops/sec; …".
var status = regexp.MustCompile(`(\d+) sec: (\d+) operations;(?: ([0-9.]+) current ops/sec)?`)

// percentile keys: "95thPercentileLatency(us)", "99.9PercentileLatency(us)".
var percentile = regexp.MustCompile(`^([0-9.]+)(?:th)?PercentileLatency\((us|ms)\)$`)

type section struct {
	overall map[string]float64
	ops     map[string]*opStats
	order   []string
}

type opStats struct {
	values  map[string]float64 // key → value in ms for latencies
	returns map[string]float64 // Return=… → count
}

func newSection() *section {
	return &section{overall: map[string]float64{}, ops: map[string]*opStats{}}
}

// Parse reads YCSB's report. Markdown-indented reports (results notes) are
// read too. When a file holds several reports, the last complete one counts.
func (YCSB) Parse(in workloads.ParseInput) *results.Result {
	r := results.New("ycsb")
	r.Primary = results.Key{Name: "opsPerSecond", Operation: "OVERALL"}
	p := &reportParser{r: r}
	for _, line := range workloads.Lines(in.Output) {
		p.line(strings.TrimSpace(line))
	}
	workloads.JudgeExitCode(r, "ycsb", in.ExitCode)
	last := p.lastComplete()
	if last == nil {
		msg := "no [OVERALL] summary: the YCSB client did not finish"
		if p.firstError != "" {
			msg += "; first error: " + truncate(p.firstError, 200)
		}
		r.Fail("%s", msg)
		return r
	}
	if len(p.sections) > 1 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d YCSB reports in one output; the last complete one is reported", len(p.sections)))
	}
	if useIntended(last) {
		r.SetParam("latencyMeasuredFrom", "intendedStart")
	}
	throughput := last.overall["Throughput(ops/sec)"]
	r.Add(results.Metric{Name: "opsPerSecond", Operation: "OVERALL", Value: throughput, Unit: "ops/s", Direction: results.HigherIsBetter})
	r.Add(results.Metric{Name: "runtimeSeconds", Operation: "OVERALL", Value: last.overall["RunTime(ms)"] / 1000, Unit: "s", Direction: results.Neutral, Detail: true})
	total, failed := addOperations(r, last)
	addFailures(r, total, failed)
	if total == 0 && throughput > 0 {
		r.Warnings = append(r.Warnings, "no per-operation lines in the report")
	}
	firstError := p.firstError
	if firstError == "" {
		firstError = p.stopped
	}
	judgeWork(r, throughput, p.stopped != "", firstError)
	readHistograms(r, in.Files)
	return r
}

// reportParser reads YCSB's output a line at a time: the progress lines,
// the reports' sections, and the errors printed beside them.
type reportParser struct {
	r *results.Result
	// sections are the reports read, each begun by its [OVERALL] RunTime;
	// cur is the last.
	sections []*section
	cur      *section
	// firstError is the first exception or error printed; stopped the
	// first line saying a client thread stopped.
	firstError, stopped string
}

// line reads one trimmed line: the tool's version, an error, a progress
// line (the time series) or a row of a report.
func (p *reportParser) line(line string) {
	if p.stopped == "" && threadStopped(line) {
		p.stopped = line
	}
	if strings.HasPrefix(line, "YCSB Client ") && p.r.ToolVersion == "" {
		p.r.ToolVersion = strings.TrimPrefix(line, "YCSB Client ")
	}
	if strings.HasPrefix(line, "Exception in thread") && p.firstError == "" {
		p.firstError = line
	}
	if m := status.FindStringSubmatch(line); m != nil && !strings.HasPrefix(line, "[") {
		p.progress(m)
		return
	}
	m := row.FindStringSubmatch(line)
	if m == nil {
		if p.firstError == "" && (strings.Contains(line, "Exception") || strings.HasPrefix(line, "Error")) && !strings.HasPrefix(line, "at ") {
			p.firstError = line
		}
		return
	}
	name, key := m[1], strings.TrimSpace(m[2])
	val, ok := workloads.Float(m[3])
	if !ok {
		return
	}
	if name == "OVERALL" && key == "RunTime(ms)" {
		p.cur = newSection()
		p.sections = append(p.sections, p.cur)
	}
	if p.cur != nil {
		p.cur.add(name, key, val)
	}
}

// progress adds a status line's point to the time series.
func (p *reportParser) progress(m []string) {
	t, _ := workloads.Float(m[1])
	ops, _ := workloads.Float(m[2])
	v := map[string]float64{"operations": ops}
	if rate, ok := workloads.Float(m[3]); ok {
		v["opsPerSecond"] = rate
	}
	p.r.TimeSeries = append(p.r.TimeSeries, results.Point{ElapsedSeconds: t, Values: v})
}

// lastComplete is the last report with a throughput, or nil.
func (p *reportParser) lastComplete() *section {
	for i := len(p.sections) - 1; i >= 0; i-- {
		if _, ok := p.sections[i].overall["Throughput(ops/sec)"]; ok {
			return p.sections[i]
		}
	}
	return nil
}

// add reads one row of the section: the overall figures, or an
// operation's count, latencies and return codes.
func (s *section) add(name, key string, val float64) {
	switch {
	case name == "OVERALL":
		s.overall[key] = val
		return
	case strings.HasPrefix(name, "TOTAL_GC"):
		return // JVM garbage collection: not the database's doing.
	}
	op := s.ops[name]
	if op == nil {
		op = &opStats{values: map[string]float64{}, returns: map[string]float64{}}
		s.ops[name] = op
		s.order = append(s.order, name)
	}
	switch {
	case strings.HasPrefix(key, "Return="):
		op.returns[strings.TrimPrefix(key, "Return=")] += val
	case key == "Operations":
		op.values["operations"] = val
	default:
		if k, ms, ok := latencyKey(key, val); ok {
			op.values[k] = ms
		}
		// Histogram buckets ("0, 530", ">1000, 0") are left out.
	}
}

// useIntended makes each operation's latencies those YCSB measured from
// its intended start ([Intended-READ], measurement.interval=both or
// intended): at a fixed -target they include the time a request waited
// for a busy client thread, which the latency from the moment it was sent
// leaves out (coordinated omission). The latter stay as the operation's
// service time (serviceLatency… metrics, detail). It says whether the
// report had any.
func useIntended(s *section) bool {
	found := false
	for _, name := range append([]string(nil), s.order...) {
		base, ok := strings.CutPrefix(name, IntendedPrefix)
		if !ok {
			continue
		}
		intended := s.ops[name]
		delete(s.ops, name)
		s.order = slices.DeleteFunc(s.order, func(n string) bool { return n == name })
		op := s.ops[base]
		if op == nil { // measurement.interval=intended: no service time
			op = &opStats{values: map[string]float64{"operations": intended.values["operations"]}, returns: intended.returns}
			s.ops[base] = op
			s.order = append(s.order, base)
		}
		for k, v := range op.values {
			if strings.HasPrefix(k, "latency") {
				op.values["service"+strings.ToUpper(k[:1])+k[1:]] = v
				delete(op.values, k)
			}
		}
		for k, v := range intended.values {
			if strings.HasPrefix(k, "latency") {
				op.values[k] = v
			}
		}
		found = true
	}
	return found
}

// addOperations adds each operation's figures from the report, and
// returns the operations counted and those that failed.
func addOperations(r *results.Result, last *section) (total, failed float64) {
	for _, name := range last.order {
		op := last.ops[name]
		if name == "CLEANUP" {
			continue // closing the client's connections, not a database operation
		}
		if strings.HasSuffix(name, "-FAILED") {
			// YCSB's separate latency series of failed operations; their
			// count is already in the base operation's Return= lines.
			r.Add(results.Metric{Name: "failedOperations", Operation: strings.TrimSuffix(name, "-FAILED"), Value: op.values["operations"], Unit: "count", Direction: results.LowerIsBetter, Detail: true})
			continue
		}
		n := op.values["operations"]
		total += n
		r.Add(results.Metric{Name: "operations", Operation: name, Value: n, Unit: "count", Direction: results.Neutral, Detail: true})
		for _, k := range workloads.SortedKeys(op.values) {
			if k == "operations" {
				continue
			}
			detail := k == "latencyMinMillis" || k == "latencyMaxMillis" || strings.HasPrefix(k, "service")
			r.Add(results.Metric{Name: k, Operation: name, Value: op.values[k], Unit: "ms", Direction: results.LowerIsBetter, Detail: detail})
		}
		for _, code := range workloads.SortedKeys(op.returns) {
			c := op.returns[code]
			r.Add(results.Metric{Name: "return" + returnName(code), Operation: name, Value: c, Unit: "count", Direction: results.Neutral, Detail: true})
			if isError(code) {
				failed += c
			}
		}
	}
	return total, failed
}

// addFailures adds the share and count of failed operations.
func addFailures(r *results.Result, total, failed float64) {
	if total > 0 {
		r.Add(results.Metric{Name: "errorPercent", Value: 100 * failed / total, Unit: "%", Direction: results.LowerIsBetter})
	}
	if failed > 0 {
		r.Add(results.Metric{Name: "failedOperations", Value: failed, Unit: "count", Direction: results.LowerIsBetter})
	}
}

// judgeWork fails a report of zeros, which YCSB prints (and exits 0) after
// every client thread died, and invalidates one in which some threads
// stopped on an exception: it measured fewer threads than asked.
func judgeWork(r *results.Result, throughput float64, stopped bool, firstError string) {
	if stopped {
		r.Invalidate("a YCSB client thread stopped on an exception, so fewer threads ran than asked: %s", truncate(firstError, 200))
	}
	workloads.RequireWork(r, throughput, "operation (throughput 0)")
	workloads.RequireSuccess(r)
}

// threadStopped: an uncaught exception ends its thread ("Exception in
// thread"), and YCSB's ClientThread returns when the binding's init fails
// (the trace passes DBWrapper.init). Exceptions a binding catches and
// turns into an error return are counted by the Return= lines instead.
func threadStopped(line string) bool {
	return strings.HasPrefix(line, "Exception in thread") ||
		strings.HasPrefix(line, "at site.ycsb.DBWrapper.init(") || strings.HasPrefix(line, "at com.yahoo.ycsb.DBWrapper.init(")
}

// ParsePrepare judges the load phase, which YCSB ends with exit 0 when
// inserts failed or client threads died: any failed insert fails it.
func (y YCSB) ParsePrepare(in workloads.ParseInput) []string {
	return workloads.PrepareReasons(y.Parse(workloads.WithoutExitCode(in)))
}

var _ workloads.PrepareParser = YCSB{}

// readHistograms attaches the HdrHistogram logs YCSB wrote per operation
// (hdrhistogram.fileoutput), all intervals merged, so that the results of
// several load generators merge into true percentiles.
// From each operation's intended start when YCSB measured it so (its
// Intended- log, which then replaces the one from when it was sent).
func readHistograms(r *results.Result, files map[string][]byte) {
	for _, name := range workloads.SortedKeys(files) {
		if !strings.HasPrefix(name, HistogramPrefix) || !strings.HasSuffix(name, ".hdr") {
			continue
		}
		op := strings.TrimSuffix(strings.TrimPrefix(name, HistogramPrefix), ".hdr")
		if base, ok := strings.CutPrefix(op, IntendedPrefix); ok {
			op = base
		} else if _, ok := files[HistogramPrefix+IntendedPrefix+op+".hdr"]; ok {
			continue // the intended one stands for it
		}
		sum, _, err := results.ReadHistogramLog(files[name])
		if err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("histogram log %s unreadable: %v", name, err))
			continue
		}
		if sum.TotalCount() == 0 {
			continue
		}
		if m, ok := r.Get(results.Key{Name: "operations", Operation: op}); ok && float64(sum.TotalCount()) != m.Value {
			r.Warnings = append(r.Warnings, fmt.Sprintf("histogram of %s holds %d operations, the report %g: not kept", op, sum.TotalCount(), m.Value))
			continue
		}
		if err := r.SetHistogram(op, sum); err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("histogram of %s not kept: %v", op, err))
		}
	}
}

// latencyKey maps a YCSB latency key to a metric name and converts to ms.
func latencyKey(key string, v float64) (string, float64, bool) {
	toMs := func(unit string) float64 {
		if unit == "ms" {
			return v
		}
		return v / 1000
	}
	switch key {
	case "AverageLatency(us)":
		return "latencyAverageMillis", v / 1000, true
	case "MinLatency(us)":
		return "latencyMinMillis", v / 1000, true
	case "MaxLatency(us)":
		return "latencyMaxMillis", v / 1000, true
	}
	if m := percentile.FindStringSubmatch(key); m != nil {
		p := strings.ReplaceAll(strings.TrimSuffix(m[1], ".0"), ".", "")
		return "latencyP" + p + "Millis", toMs(m[2]), true
	}
	return "", 0, false
}

// returnName turns YCSB status names (OK, ERROR, NOT_FOUND, or the old
// numeric 0 / -1) into metric name parts.
func returnName(code string) string {
	switch code {
	case "OK", "0":
		return "OK"
	case "-1":
		return "Error"
	}
	parts := strings.Split(strings.ToLower(code), "_")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

// isError: every status but OK and NOT_FOUND (a read of a missing key is
// an answer, not a failure) counts as a failed operation.
func isError(code string) bool {
	switch code {
	case "OK", "0", "NOT_FOUND":
		return false
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
