package pgbench

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/capacity"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

var (
	reVersion  = regexp.MustCompile(`^pgbench \(([0-9][^ ,)]*)(?:[^,]*)?(?:, server ([0-9][^ )]*))?`)
	reKV       = regexp.MustCompile(`^([a-z][a-z ()]+?)\s*[:=]\s*(.+)$`)
	reTPS      = regexp.MustCompile(`^tps = ([0-9.]+) \((including|excluding|without|with)[^)]*\)`)
	reFailed   = regexp.MustCompile(`^number of failed transactions: ([0-9]+) \(([0-9.]+)%\)`)
	reSkipped  = regexp.MustCompile(`^number of transactions skipped: ([0-9]+) `)
	reLate     = regexp.MustCompile(`^number of transactions above the ([0-9.]+) ms latency limit: ([0-9]+)/([0-9]+) `)
	reLag      = regexp.MustCompile(`^rate limit schedule lag: avg ([0-9.]+) \(max ([0-9.]+)\) ms`)
	reProgress = regexp.MustCompile(`^progress: ([0-9.]+) s, ([0-9.]+) tps, lat ([0-9.]+) ms stddev ([0-9.]+|NaN)(?:, ([0-9]+) failed)?(?:, lag ([0-9.]+) ms)?`)
	reStmt     = regexp.MustCompile(`^\s+([0-9.]+)\s+(?:([0-9]+)\s+)?(\S.*)$`)
	reAborted  = regexp.MustCompile(`client [0-9]+ (?:script [0-9]+ )?aborted`)
	reNoConn   = regexp.MustCompile(`could not create connection for client`)
)

// Parse reads pgbench's output (stdout and stderr together, in any of the
// formats of PostgreSQL 9.6 to 17).
func (Pgbench) Parse(in workloads.ParseInput) *results.Result {
	if runs := workloads.SplitRuns(in.Output); len(runs) > 1 || runs[0].TimeOver {
		return mergeRuns(runs, in.ExitCode)
	}
	return parseRun(in.Output, in.ExitCode)
}

// parseRun reads the output of one run of pgbench.
func parseRun(output []byte, exit *int) *results.Result {
	r := results.New("pgbench")
	r.Primary = results.Key{Name: "transactionsPerSecond"}
	var (
		haveTPS, inStatements, runAborted bool
		abortedClients, connFailures      int
	)
	for _, line := range workloads.Lines(output) {
		trimmed := strings.TrimSpace(line)
		if inStatements {
			if m := reStmt.FindStringSubmatch(line); m != nil {
				addStatement(r, m)
				continue
			}
			inStatements = false
		}
		switch {
		case trimmed == "":
		case strings.HasPrefix(trimmed, "statement latencies in milliseconds"):
			inStatements = true
		case strings.HasPrefix(trimmed, "progress: "):
			addProgress(r, trimmed)
		case strings.Contains(trimmed, "Run was aborted"):
			runAborted = true
		case reAborted.MatchString(trimmed):
			abortedClients += len(reAborted.FindAllString(trimmed, -1))
		case reNoConn.MatchString(trimmed):
			connFailures++
		default:
			if m := reVersion.FindStringSubmatch(trimmed); m != nil {
				r.ToolVersion = m[1]
				if m[2] != "" {
					r.SetParam("serverVersion", m[2])
				}
			} else if m := reTPS.FindStringSubmatch(trimmed); m != nil {
				// Old versions print the rate twice: the one that leaves out
				// connection setup measures the database, so it wins.
				if m[2] != "including" || !haveTPS {
					setMetric(r, results.Metric{Name: "transactionsPerSecond", Value: num(m[1]), Unit: "tx/s", Direction: results.HigherIsBetter})
					haveTPS = true
				}
			} else if m := reFailed.FindStringSubmatch(trimmed); m != nil {
				r.Add(results.Metric{Name: "failedTransactions", Value: num(m[1]), Unit: "count", Direction: results.LowerIsBetter})
				r.Add(results.Metric{Name: "errorPercent", Value: num(m[2]), Unit: "%", Direction: results.LowerIsBetter})
			} else if m := reSkipped.FindStringSubmatch(trimmed); m != nil {
				// Under --rate with --latency-limit: transactions already
				// late at their scheduled start, never sent.
				r.Add(results.Metric{Name: capacity.MetricSkipped, Value: num(m[1]), Unit: "count", Direction: results.LowerIsBetter})
			} else if m := reLate.FindStringSubmatch(trimmed); m != nil {
				// Latency here counts from each transaction's scheduled
				// start under --rate: corrected for coordinated omission.
				r.SetParam(capacity.ParamLatencyLimit, m[1])
				r.Add(results.Metric{Name: capacity.MetricOverLatencyLimit, Value: num(m[2]), Unit: "count", Direction: results.LowerIsBetter})
			} else if m := reLag.FindStringSubmatch(trimmed); m != nil {
				r.Add(results.Metric{Name: "scheduleLagAverageMillis", Value: num(m[1]), Unit: "ms", Direction: results.LowerIsBetter})
				r.Add(results.Metric{Name: "scheduleLagMaxMillis", Value: num(m[2]), Unit: "ms", Direction: results.LowerIsBetter})
			} else if m := reKV.FindStringSubmatch(trimmed); m != nil {
				addSetting(r, m[1], m[2])
			}
		}
	}
	judge(r, exit, haveTPS, runAborted, abortedClients, connFailures)
	return r
}

func judge(r *results.Result, exit *int, haveTPS, runAborted bool, abortedClients, connFailures int) {
	if abortedClients > 0 {
		r.Add(results.Metric{Name: "abortedClients", Value: float64(abortedClients), Unit: "count", Direction: results.LowerIsBetter})
	}
	if runAborted {
		r.Fail("pgbench reported \"Run was aborted; the above results are incomplete\" (%d clients aborted)", abortedClients)
	} else if abortedClients > 0 {
		r.Invalidate("%d pgbench clients aborted during the run", abortedClients)
	}
	if connFailures > 0 {
		r.Fail("pgbench could not create the connections of %d clients", connFailures)
	}
	// pgbench exits 0 when no transaction completed, and then prints no tps.
	if m, ok := r.Get(results.Key{Name: "transactionsProcessed"}); ok {
		workloads.RequireWork(r, m.Value, "transaction")
	}
	if !haveTPS {
		r.Fail("pgbench printed no summary (no \"tps = \" line)")
	} else if tps, _ := r.Get(r.Primary); tps.Value == 0 {
		r.Fail("pgbench printed tps = 0: nothing was measured")
	}
	workloads.JudgeExitCode(r, "pgbench", exit)
	if _, ok := r.Get(results.Key{Name: "failedTransactions"}); !ok && haveTPS {
		// Before PostgreSQL 15 pgbench gives up on the first error instead
		// of counting failures, so a printed summary had none.
		r.Add(results.Metric{Name: "errorPercent", Value: 0, Unit: "%", Direction: results.LowerIsBetter})
	}
	workloads.RequireSuccess(r)
}

func addSetting(r *results.Result, key, value string) {
	value = strings.TrimSpace(value)
	switch key {
	case "transaction type":
		r.SetParam("script", value)
	case "scaling factor":
		r.SetParam("scale", value)
	case "query mode":
		r.SetParam("protocol", value)
	case "number of clients":
		r.SetParam("clients", value)
	case "number of threads":
		r.SetParam("jobs", value)
	case "maximum number of tries":
		r.SetParam("maxTries", value)
	case "duration":
		r.SetParam("duration", value)
	case "number of transactions per client":
		r.SetParam("transactionsPerClient", value)
	case "number of transactions actually processed":
		done, _, _ := strings.Cut(value, "/")
		addNumber(r, "transactionsProcessed", done, "count", results.Neutral)
	case "latency average":
		addNumber(r, "latencyAverageMillis", value, "ms", results.LowerIsBetter)
	case "latency stddev":
		addNumber(r, "latencyStddevMillis", value, "ms", results.LowerIsBetter)
	case "initial connection time":
		addNumber(r, "initialConnectionMillis", value, "ms", results.LowerIsBetter)
	}
}

// addNumber records a metric when text is a number, and warns otherwise.
func addNumber(r *results.Result, name, text, unit string, dir results.Direction) {
	v, ok := workloads.Float(text)
	if !ok {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %q is not a number", name, text))
		return
	}
	r.Add(results.Metric{Name: name, Value: v, Unit: unit, Direction: dir})
}

func addStatement(r *results.Result, m []string) {
	stmt := strings.TrimSpace(m[3])
	if len(stmt) > 160 {
		stmt = stmt[:160] + "…"
	}
	r.Add(results.Metric{Name: "statementLatencyMillis", Operation: stmt, Value: num(m[1]), Unit: "ms", Direction: results.LowerIsBetter, Detail: true})
	if m[2] != "" {
		r.Add(results.Metric{Name: "statementFailures", Operation: stmt, Value: num(m[2]), Unit: "count", Direction: results.LowerIsBetter, Detail: true})
	}
}

func addProgress(r *results.Result, line string) {
	m := reProgress.FindStringSubmatch(line)
	if m == nil {
		return
	}
	p := results.Point{ElapsedSeconds: num(m[1]), Values: map[string]float64{
		"transactionsPerSecond": num(m[2]),
		"latencyAverageMillis":  num(m[3]),
	}}
	if v, ok := workloads.Float(m[4]); ok {
		p.Values["latencyStddevMillis"] = v
	}
	if m[5] != "" {
		p.Values["failedTransactions"] = num(m[5])
	}
	if m[6] != "" {
		p.Values["scheduleLagMillis"] = num(m[6])
	}
	r.TimeSeries = append(r.TimeSeries, p)
}

func setMetric(r *results.Result, m results.Metric) {
	for i := range r.Metrics {
		if r.Metrics[i].Key() == m.Key() {
			r.Metrics[i] = m
			return
		}
	}
	r.Add(m)
}

// num reads text the regular expressions already matched as a number.
func num(s string) float64 {
	v, _ := workloads.Float(s)
	return v
}
