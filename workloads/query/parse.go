package query

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Names of the metrics; times are in milliseconds, as the client measured
// them from sending a query until the last byte of its result.
const (
	MetricGeometricMean = "geometricMeanTimeMillis"
	MetricTotal         = "totalTimeMillis"
	MetricFailedQueries = "failedQueries"
	MetricCold          = "coldTimeMillis"
	MetricHot           = "hotTimeMillis"
	MetricFailedRuns    = "failedRuns"
	MetricRows          = "resultRows"
)

const toolName = "dbperf-runner query"

// Parse reads the report `dbperf-runner query` wrote. Each query is an
// operation with its cold time (the first run) and hot time (the median of
// the others); the headline is the geometric mean of the hot times (of
// the cold ones with one run per query) over the queries that never
// failed. Failed runs are counted per query and overall, named in the
// warnings with the server's message, and make errorPercent, which
// validity.maxErrorPercent judges.
func (Query) Parse(in workloads.ParseInput) *results.Result {
	r := results.New("query-bench")
	r.Primary = results.Key{Name: MetricGeometricMean}
	raw, ok := in.Files[ResultFileName]
	if !ok {
		raw, ok = in.Files["input.json"] // `dbperf-runner parse --input` of a saved report
	}
	if !ok {
		r.Fail("%s wrote no %s%s", toolName, ResultFileName, lastOutputLine(in.Output))
		workloads.JudgeExitCode(r, toolName, in.ExitCode)
		return r
	}
	var rep Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		r.Fail("%s is not a query report: %v", ResultFileName, err)
		return r
	}
	if rep.Version != ReportVersion {
		r.Fail("%s has version %d; this parser reads version %d", ResultFileName, rep.Version, ReportVersion)
		return r
	}
	r.ToolVersion = rep.ClientVersion
	r.SetParam("driver", rep.Driver)
	r.SetParam("runsPerQuery", strconv.Itoa(rep.RunsPerQuery))
	r.SetParam("queries", strconv.Itoa(len(rep.Queries)))
	if rep.ServerVersion != "" {
		r.SetParam("serverVersion", rep.ServerVersion)
	}
	if !rep.Start.IsZero() && !rep.End.IsZero() {
		start, end := rep.Start, rep.End
		r.StartTime, r.EndTime = &start, &end
	}
	summarize(r, rep.Queries)
	if rep.Error != "" {
		r.Fail("%s stopped: %s", toolName, rep.Error)
	}
	workloads.JudgeExitCode(r, toolName, in.ExitCode)
	workloads.RequireSuccess(r)
	return r
}

// summarize adds the per-query and overall metrics.
func summarize(r *results.Result, queries []QueryRuns) {
	var (
		total, runs, failedRuns float64
		logSum                  float64
		clean                   int
		failed, usedCold        []string
	)
	for _, q := range queries {
		s := summarizeQuery(r, q)
		total += s.total
		runs += float64(len(q.Runs))
		failedRuns += float64(s.failures)
		switch {
		case s.failures > 0:
			failed = append(failed, q.Name)
			r.Warnings = append(r.Warnings, fmt.Sprintf("query %s failed %d of %d runs: %s", q.Name, s.failures, len(q.Runs), s.firstError))
		case len(q.Runs) > 0:
			logSum += math.Log(math.Max(s.figure, 0.001))
			clean++
			if s.cold {
				usedCold = append(usedCold, q.Name)
			}
		}
	}
	if runs == 0 {
		r.Fail("no query ran: nothing was measured")
		return
	}
	if clean > 0 {
		r.Add(results.Metric{Name: MetricGeometricMean, Value: round(math.Exp(logSum / float64(clean))), Unit: "ms", Direction: results.LowerIsBetter})
	}
	r.Add(results.Metric{Name: MetricTotal, Value: round(total), Unit: "ms", Direction: results.LowerIsBetter})
	r.Add(results.Metric{Name: MetricFailedQueries, Value: float64(len(failed)), Unit: "count", Direction: results.LowerIsBetter})
	workloads.AddErrorShare(r, failedRuns, runs)
	sortMetrics(r)
	if len(failed) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the geometric mean leaves out %d of %d queries, which failed: %s",
			len(failed), len(queries), strings.Join(failed, ", ")))
	}
	if clean == 0 {
		r.Fail("every query failed: there is no geometric mean")
	}
	if len(usedCold) > 0 && len(usedCold) < clean {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the geometric mean takes the cold time of %s, which ran once", strings.Join(usedCold, ", ")))
	}
}

type querySummary struct {
	total      float64 // of the successful runs
	failures   int
	firstError string
	// figure is what the geometric mean takes: the hot time, or the cold
	// one (cold true) when the query ran once.
	figure float64
	cold   bool
}

func summarizeQuery(r *results.Result, q QueryRuns) querySummary {
	var s querySummary
	var hot []float64
	var rows int64 = -1
	for i, run := range q.Runs {
		if run.Failed() {
			s.failures++
			if s.firstError == "" {
				s.firstError = run.Error
			}
			continue
		}
		s.total += run.Millis
		rows = run.Rows
		if i == 0 {
			r.Add(results.Metric{Name: MetricCold, Operation: q.Name, Value: run.Millis, Unit: "ms", Direction: results.LowerIsBetter})
			s.figure, s.cold = run.Millis, true
		} else {
			hot = append(hot, run.Millis)
		}
	}
	if len(hot) > 0 {
		s.figure, s.cold = median(hot), false
		r.Add(results.Metric{Name: MetricHot, Operation: q.Name, Value: s.figure, Unit: "ms", Direction: results.LowerIsBetter})
	}
	if s.failures > 0 {
		r.Add(results.Metric{Name: MetricFailedRuns, Operation: q.Name, Value: float64(s.failures), Unit: "count", Direction: results.LowerIsBetter})
	}
	if rows >= 0 {
		r.Add(results.Metric{Name: MetricRows, Operation: q.Name, Value: float64(rows), Unit: "rows", Direction: results.Neutral, Detail: true})
	}
	return s
}

// sortMetrics puts the overall metrics first, then the queries' in their
// order: the compact summary keeps the head when it must drop some.
func sortMetrics(r *results.Result) {
	sort.SliceStable(r.Metrics, func(i, j int) bool {
		return r.Metrics[i].Operation == "" && r.Metrics[j].Operation != ""
	})
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// round keeps microseconds, the client's resolution.
func round(ms float64) float64 { return math.Round(ms*1000) / 1000 }

// lastOutputLine quotes the last line of output, where the runner's
// subcommand says why it stopped.
func lastOutputLine(out []byte) string {
	lines := workloads.Lines(out)
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return ": " + l
		}
	}
	return ""
}
