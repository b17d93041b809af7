package memtier

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Parse reads memtier_benchmark's output. With a --json-out-file document the
// numbers come from it; the text output is still read for errors, and is the
// source of the numbers when there is no (readable) JSON.
func (Memtier) Parse(in workloads.ParseInput) *results.Result {
	r := results.New("memtier")
	r.Primary = results.Key{Name: "opsPerSecond", Operation: "Totals"}
	lines := workloads.Lines(in.Output)
	errs := scanErrors(r, lines)

	var rows map[string]bool
	if doc := jsonDocument(in.Files); doc != nil {
		var err error
		rows, err = parseJSON(r, doc)
		if err != nil {
			r.Warnings = append(r.Warnings, "the JSON result could not be read, the text table is used instead: "+err.Error())
			rows = nil
		}
	}
	if rows == nil {
		rows = parseText(r, lines)
	}
	judge(r, rows, in.ExitCode)
	judgeErrors(r, errs)
	workloads.RequireSuccess(r)
	return r
}

// ParsePrepare judges the load step, which memtier ends with exit 0 even
// when the server refused the writes (a server out of memory answers
// -OOM): any refused write fails it, since the measurement would then
// read keys that are not there.
func (m Memtier) ParsePrepare(in workloads.ParseInput) []string {
	var out []string
	for _, reason := range workloads.PrepareReasons(m.Parse(workloads.WithoutExitCode(in))) {
		if reason != subSecondRun { // a load done in under a second is done
			out = append(out, reason)
		}
	}
	return out
}

// subSecondRun is why a run that answered requests in under a second has no
// rate: memtier prints Totals ops/sec 0 for it.
const subSecondRun = "the run lasted under a second, for which memtier prints no rate (Totals ops/sec 0 with latencies measured): lengthen it (--test-time or more --requests)"

func jsonDocument(files map[string][]byte) []byte {
	for name, data := range files {
		if strings.HasSuffix(path.Base(name), ".json") && len(data) > 0 {
			return data
		}
	}
	return nil
}

var _ workloads.PrepareParser = Memtier{}

var (
	reHeaderCount = regexp.MustCompile(`^([0-9]+)\s+(Threads|Connections per thread|Seconds|Requests per client)\s*$`)
	reSection     = regexp.MustCompile(`^(ALL STATS|AGGREGATED AVERAGE RESULTS.*|BEST RUN RESULTS|WORST RUN RESULTS)\s*$`)
	reColumns     = regexp.MustCompile(`\s{2,}`)
)

// outputErrors are what memtier printed about failed requests.
type outputErrors struct {
	responses     int    // error responses ("handle error response")
	firstResponse string // the first of them
}

// scanErrors reads what memtier prints when requests or connections fail.
// Error responses are counted (judged as a share of requests once the
// request count is known); a lost connection stops its client for the
// rest of the run, so the run measured fewer clients than asked: Invalid.
func scanErrors(r *results.Result, lines []string) outputErrors {
	var errs outputErrors
	var connErrors int
	for _, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case strings.Contains(l, "handle error response"), strings.HasPrefix(l, "error: response parsing failed"):
			errs.responses++
			if errs.firstResponse == "" {
				errs.firstResponse = l
			}
		case strings.HasPrefix(l, "Connection error:"), strings.HasPrefix(l, "connect failed"):
			connErrors++
		case strings.Contains(l, "test aborted"), strings.Contains(l, "failed to prepare thread"),
			strings.Contains(l, "failed to connect"):
			r.Fail("memtier aborted the test: %s", l)
		case strings.HasPrefix(l, "error: authentication failed"):
			r.Fail("memtier could not authenticate (check the target's credentials): %s", l)
		case setupFailed(l):
			r.Fail("memtier could not set up its connections: %s", l)
		}
		if m := reHeaderCount.FindStringSubmatch(l); m != nil {
			r.SetParam(paramName(m[2]), m[1])
		}
	}
	if connErrors > 0 {
		r.Add(results.Metric{Name: "connectionErrors", Value: float64(connErrors), Unit: "count", Direction: results.LowerIsBetter})
		r.Invalidate("memtier reported %d connection errors", connErrors)
	}
	return errs
}

// setupFailed: the connection-setup failures after which memtier never
// ends (fatalPrefixes, which also arm the runner's watchdog).
func setupFailed(l string) bool {
	return Memtier{}.FatalOutput(l)
}

// judgeErrors turns error responses into errorPercent, the share of
// requests validity.maxErrorPercent judges. Without a request count the
// share is unknown, and any error response makes the run Invalid.
func judgeErrors(r *results.Result, errs outputErrors) {
	if errs.responses == 0 {
		if total, ok := requestCount(r); ok && total > 0 {
			workloads.AddErrorShare(r, 0, total)
		}
		return
	}
	n := float64(errs.responses)
	r.Add(results.Metric{Name: "errorResponses", Value: n, Unit: "count", Direction: results.LowerIsBetter})
	total, ok := requestCount(r)
	if !ok || total <= 0 {
		r.Invalidate("the server answered %d requests with an error response (%s); the share of requests is unknown (no request count)", errs.responses, errs.firstResponse)
		return
	}
	r.Warnings = append(r.Warnings, fmt.Sprintf("the server answered %d of %.0f requests with an error response (first: %s)", errs.responses, total, errs.firstResponse))
	workloads.AddErrorShare(r, n, total)
}

// requestCount is how many requests the run sent: the JSON's Totals count,
// else the text table's Totals ops/s over the test time, else the fixed
// number of requests per client.
func requestCount(r *results.Result) (float64, bool) {
	if m, ok := r.Get(results.Key{Name: "requests", Operation: "Totals"}); ok {
		return m.Value, true
	}
	num := func(k string) float64 { v, _ := strconv.ParseFloat(r.Parameters[k], 64); return v }
	if ops, ok := r.Get(results.Key{Name: "opsPerSecond", Operation: "Totals"}); ok && num("testTimeSeconds") > 0 {
		return ops.Value * num("testTimeSeconds"), true
	}
	if n := num("requestsPerClient") * num("threads") * num("clientsPerThread"); n > 0 {
		return n, true
	}
	return 0, false
}

// paramName names a setting memtier reports, in its text header or in the
// "run information" of its JSON, the way results name parameters.
func paramName(s string) string {
	switch s {
	case "Threads":
		return "threads"
	case "Connections per thread":
		return "clientsPerThread"
	case "Seconds":
		return "testTimeSeconds"
	case "Requests per client":
		return "requestsPerClient"
	case "Format version":
		return "jsonFormatVersion"
	}
	return s
}

// parseText reads the chosen results table and returns the row types seen.
// An aggregated table over several runs wins over the last ALL STATS table.
func parseText(r *results.Result, lines []string) map[string]bool {
	start := -1
	for i, l := range lines {
		m := reSection.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		if strings.HasPrefix(m[1], "AGGREGATED") || (m[1] == "ALL STATS" && (start < 0 || !strings.HasPrefix(strings.TrimSpace(lines[start]), "AGGREGATED"))) {
			start = i
		}
	}
	if start < 0 {
		return nil
	}
	var columns []string
	rows := map[string]bool{}
	for _, l := range lines[start+1:] {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "==="), strings.HasPrefix(t, "---"):
			continue
		case strings.HasPrefix(t, "Type "):
			columns = reColumns.Split(t, -1)[1:]
			continue
		case t == "" && columns != nil && len(rows) > 0:
			return rows
		case t == "" || columns == nil:
			continue
		}
		fields := strings.Fields(t)
		op := fields[0]
		if len(fields)-1 < len(columns) {
			r.Warnings = append(r.Warnings, "the "+op+" row of the results table is cut short")
			continue
		}
		rows[op] = true
		for i, col := range columns {
			addCell(r, op, col, fields[i+1])
		}
	}
	return rows
}

func addCell(r *results.Result, op, column, cell string) {
	v, ok := workloads.Float(cell)
	if !ok || op == "Waits" {
		return
	}
	if m, ok := metricFor(column); ok {
		m.Operation, m.Value = op, v
		r.Add(m)
	}
}

// metricFor maps a memtier column or JSON key to a normalized metric.
func metricFor(column string) (results.Metric, bool) {
	switch column {
	case "Ops/sec":
		return results.Metric{Name: "opsPerSecond", Unit: "ops/s", Direction: results.HigherIsBetter}, true
	case "Hits/sec":
		return results.Metric{Name: "hitsPerSecond", Unit: "ops/s", Direction: results.Neutral}, true
	case "Misses/sec":
		return results.Metric{Name: "missesPerSecond", Unit: "ops/s", Direction: results.Neutral}, true
	case "Avg. Latency", "Latency", "Average Latency":
		return results.Metric{Name: "latencyAverageMillis", Unit: "ms", Direction: results.LowerIsBetter}, true
	case "Min Latency":
		return results.Metric{Name: "latencyMinMillis", Unit: "ms", Direction: results.LowerIsBetter}, true
	case "Max Latency":
		return results.Metric{Name: "latencyMaxMillis", Unit: "ms", Direction: results.LowerIsBetter}, true
	case "KB/sec":
		return results.Metric{Name: "kilobytesPerSecond", Unit: "KB/s", Direction: results.HigherIsBetter}, true
	}
	p := strings.TrimSuffix(strings.TrimPrefix(column, "p"), " Latency")
	if p == column || p == "" {
		return results.Metric{}, false
	}
	if _, err := strconv.ParseFloat(p, 64); err != nil {
		return results.Metric{}, false
	}
	return results.Metric{Name: PercentileName(p), Unit: "ms", Direction: results.LowerIsBetter}, true
}

// PercentileName turns "99.9", "99.90" or "50" into latencyP999Millis,
// latencyP999Millis and latencyP50Millis.
func PercentileName(p string) string {
	if strings.Contains(p, ".") {
		p = strings.TrimRight(p, "0")
		p = strings.TrimSuffix(p, ".")
	}
	return "latencyP" + strings.ReplaceAll(p, ".", "") + "Millis"
}

func judge(r *results.Result, rows map[string]bool, exit *int) {
	switch {
	case len(rows) == 0:
		r.Fail("memtier printed no results table")
	case !rows["Totals"]:
		r.Fail("the results table is incomplete: it has no Totals row")
	default:
		ops, ok := r.Get(r.Primary)
		lat, timed := r.Get(results.Key{Name: "latencyAverageMillis", Operation: "Totals"})
		switch {
		case ok && ops.Value > 0:
		case ok && timed && lat.Value > 0:
			// memtier divides by whole seconds: requests were answered
			// (timed), but in under one, so it prints no rate.
			r.Invalidate("%s", subSecondRun)
		default:
			r.Fail("no request completed (Totals ops/sec is 0)")
		}
	}
	workloads.JudgeExitCode(r, "memtier_benchmark", exit)
}
