package pgbench

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/capacity"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// RestartCommand: pgbench ends a client whose connection is lost and never
// reconnects, so a primary's loss ends the run; the runner starts it again
// with --time shortened to what is left (rounded to whole seconds: its end
// is within half a second of the first run's; at least one) and
// without the vacuum of its start (the tables are the run's already).
func (Pgbench) RestartCommand(cmd []string, elapsed time.Duration) ([]string, bool) {
	i := slices.Index(cmd, "--time")
	if i < 0 || i+1 >= len(cmd) {
		return nil, false
	}
	total, err := strconv.Atoi(cmd[i+1])
	if err != nil {
		return nil, false
	}
	left := int(math.Round(float64(total) - elapsed.Seconds()))
	if left < 1 {
		return nil, false
	}
	next := slices.Clone(cmd)
	next[i+1] = strconv.Itoa(left)
	if !slices.Contains(next, "--no-vacuum") {
		next = append(next[:1:1], append([]string{"--no-vacuum"}, next[1:]...)...)
	}
	return next, true
}

// mergeRuns makes one result of the runs of a pgbench the runner restarted
// (workloads.SplitRuns): counts add up, averages are weighted by the
// transactions of each run, the progress series is placed on the first
// run's clock with zero throughput from a run's last line to the next
// run's start, and the rate is the transactions over the whole time, the
// time without a server included: what the clients could not do counts.
// Only the last run is judged as a run: the ones before it ended as the
// member loss made them end.
func mergeRuns(runs []workloads.Run, exit *int) *results.Result {
	parts := make([]*results.Result, len(runs))
	for i, run := range runs {
		var code *int
		if i == len(runs)-1 {
			code = exit
		}
		parts[i] = parseRun(run.Output, code)
	}
	r := results.New("pgbench")
	r.Primary = results.Key{Name: "transactionsPerSecond"}
	r.ToolVersion = parts[0].ToolVersion
	for k, v := range parts[0].Parameters {
		r.SetParam(k, v)
	}
	var (
		tx, failed, lagWeighted, latWeighted, latSquares, lagMax float64
		aborted, measured                                        int
		statements                                               []string
		stmtLatency                                              = map[string]float64{}
		stmtWeight                                               = map[string]float64{}
		stmtFailures                                             = map[string]float64{}
		sums                                                     = map[string]float64{}
		span                                                     float64
		gap                                                      = -1
	)
	get := func(p *results.Result, name string) (float64, bool) {
		m, ok := p.Get(results.Key{Name: name})
		return m.Value, ok
	}
	for i, p := range parts {
		at := runs[i].StartSeconds
		if i > 0 {
			// The previous run's transactions after its last progress line,
			// to the moment it ended.
			prev, lastAt := parts[i-1], runs[i-1].StartSeconds
			if n := len(prev.TimeSeries); n > 0 {
				lastAt += prev.TimeSeries[n-1].ElapsedSeconds
			}
			if done, ok := get(prev, "transactionsProcessed"); ok && runs[i].PreviousEndedSeconds > lastAt+0.001 {
				rest := math.Max(0, done-counted(prev.TimeSeries))
				r.TimeSeries = append(r.TimeSeries, results.Point{ElapsedSeconds: runs[i].PreviousEndedSeconds,
					Values: map[string]float64{"transactionsPerSecond": rest / (runs[i].PreviousEndedSeconds - lastAt)}})
			}
		}
		switch n := len(r.TimeSeries); {
		case i == 0:
		case n > 0 && n-1 == gap:
			r.TimeSeries[gap].ElapsedSeconds = at // one more start that found no server
		default:
			r.TimeSeries = append(r.TimeSeries, results.Point{ElapsedSeconds: at, Values: map[string]float64{"transactionsPerSecond": 0}})
			gap = len(r.TimeSeries) - 1
		}
		for _, pt := range p.TimeSeries {
			pt.ElapsedSeconds += at
			r.TimeSeries = append(r.TimeSeries, pt)
		}
		if n, ok := get(p, "abortedClients"); ok {
			aborted += int(n)
		}
		if d, err := strconv.ParseFloat(strings.TrimSuffix(p.Parameters["duration"], " s"), 64); err == nil {
			span = math.Max(span, at+d)
		}
		n, ok := get(p, "transactionsProcessed")
		if !ok {
			continue // a start that found no server
		}
		measured++
		tx += n
		if f, ok := get(p, "failedTransactions"); ok {
			failed += f
		}
		lat, _ := get(p, "latencyAverageMillis")
		sd, _ := get(p, "latencyStddevMillis")
		latWeighted += n * lat
		latSquares += n * (sd*sd + lat*lat)
		if lag, ok := get(p, "scheduleLagAverageMillis"); ok {
			lagWeighted += n * lag
		}
		if lag, ok := get(p, "scheduleLagMaxMillis"); ok {
			lagMax = math.Max(lagMax, lag)
		}
		for _, name := range []string{capacity.MetricSkipped, capacity.MetricOverLatencyLimit} {
			if v, ok := get(p, name); ok {
				sums[name] += v
			}
		}
		for _, m := range p.Metrics {
			switch m.Name {
			case "statementLatencyMillis":
				if _, seen := stmtWeight[m.Operation]; !seen {
					statements = append(statements, m.Operation)
				}
				stmtLatency[m.Operation] += n * m.Value
				stmtWeight[m.Operation] += n
			case "statementFailures":
				stmtFailures[m.Operation] += m.Value
			}
		}
	}
	if n := len(r.TimeSeries); n > 0 {
		span = math.Max(span, r.TimeSeries[n-1].ElapsedSeconds)
	}
	last := parts[len(parts)-1]
	if measured == 0 || tx == 0 || span <= 0 {
		r.Fail("none of pgbench's %d runs measured a transaction", len(parts))
	} else {
		mean := latWeighted / tx
		r.Add(results.Metric{Name: "transactionsPerSecond", Value: tx / span, Unit: "tx/s", Direction: results.HigherIsBetter})
		r.Add(results.Metric{Name: "transactionsProcessed", Value: tx, Unit: "count", Direction: results.Neutral})
		r.Add(results.Metric{Name: "failedTransactions", Value: failed, Unit: "count", Direction: results.LowerIsBetter})
		r.Add(results.Metric{Name: "errorPercent", Value: 100 * failed / (tx + failed), Unit: "%", Direction: results.LowerIsBetter})
		r.Add(results.Metric{Name: "latencyAverageMillis", Value: mean, Unit: "ms", Direction: results.LowerIsBetter})
		r.Add(results.Metric{Name: "latencyStddevMillis", Value: math.Sqrt(math.Max(0, latSquares/tx-mean*mean)), Unit: "ms", Direction: results.LowerIsBetter})
		if v, ok := get(parts[0], "initialConnectionMillis"); ok {
			r.Add(results.Metric{Name: "initialConnectionMillis", Value: v, Unit: "ms", Direction: results.LowerIsBetter})
		}
		if _, ok := get(parts[0], "scheduleLagAverageMillis"); ok {
			r.Add(results.Metric{Name: "scheduleLagAverageMillis", Value: lagWeighted / tx, Unit: "ms", Direction: results.LowerIsBetter})
			r.Add(results.Metric{Name: "scheduleLagMaxMillis", Value: lagMax, Unit: "ms", Direction: results.LowerIsBetter})
		}
		for _, name := range []string{capacity.MetricSkipped, capacity.MetricOverLatencyLimit} {
			if v, ok := sums[name]; ok {
				r.Add(results.Metric{Name: name, Value: v, Unit: "count", Direction: results.LowerIsBetter})
			}
		}
		for _, op := range statements {
			r.Add(results.Metric{Name: "statementLatencyMillis", Operation: op, Value: stmtLatency[op] / stmtWeight[op], Unit: "ms", Direction: results.LowerIsBetter, Detail: true})
			if f, ok := stmtFailures[op]; ok {
				r.Add(results.Metric{Name: "statementFailures", Operation: op, Value: f, Unit: "count", Direction: results.LowerIsBetter, Detail: true})
			}
		}
	}
	if aborted > 0 {
		r.Add(results.Metric{Name: "abortedClients", Value: float64(aborted), Unit: "count", Direction: results.LowerIsBetter})
	}
	r.Warnings = append(r.Warnings, fmt.Sprintf("pgbench was started %d times: it ends a client whose connection is lost and does not reconnect, so the runner started it again for the rest of its time after a member of the target was lost (%d clients ended); the rate counts the time without a run", len(parts), aborted))
	// The last run is the one that had to reach the end, unless the
	// target refused every start until the tool's time was over: then
	// the card says the target did not come back within the measurement.
	r.ExitCode = last.ExitCode
	if runs[len(runs)-1].TimeOver && last.Verdict != results.Succeeded {
		r.Warnings = append(r.Warnings, fmt.Sprintf("no run after the one started %.1f s into the measurement reached its end: the target still refused it when the tool's time was over (%s)",
			runs[len(runs)-1].StartSeconds, strings.Join(last.Reasons, "; ")))
		last = &results.Result{Verdict: results.Succeeded}
	}
	for _, why := range last.Reasons {
		if last.Verdict == results.Failed {
			r.Fail("its last run, started %.1f s into the measurement: %s", runs[len(runs)-1].StartSeconds, why)
		} else {
			r.Invalidate("its last run, started %.1f s into the measurement: %s", runs[len(runs)-1].StartSeconds, why)
		}
	}
	r.Warnings = append(r.Warnings, last.Warnings...)
	workloads.RequireSuccess(r)
	return r
}

// counted is the transactions a run's progress series accounts for: each
// line's rate over the interval since the line before.
func counted(series []results.Point) float64 {
	var n, prev float64
	for _, p := range series {
		n += p.Values["transactionsPerSecond"] * (p.ElapsedSeconds - prev)
		prev = p.ElapsedSeconds
	}
	return n
}
