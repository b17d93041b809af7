// Package metrics holds the manager's Prometheus metrics: each finished
// run's headline, each comparison's verdicts, each schedule's open
// regression and the counts read from the cache at scrape time.
package metrics

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// Prometheus metrics of the manager. The label set is bounded: one series
// per run, step and headline metric, removed when the run is deleted.
var (
	runResult = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "dbperf_run_result",
		Help: "Median over the valid repetitions of a finished run's headline metric, per step.",
	}, []string{"namespace", "run", "workload", "metric", "operation", "unit", "step", "pool", "release"})
	runValid = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "dbperf_run_valid",
		Help: "1 when a finished run Succeeded (every measurement valid), 0 when it ended Invalid or Failed; phase says which.",
	}, []string{"namespace", "run", "workload", "pool", "release", "phase"})
	scheduleRegressed = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "dbperf_schedule_regressed",
		Help: "1 while a BenchmarkSchedule's regression is open (its Regressed condition is True), 0 otherwise.",
	}, []string{"namespace", "schedule", "metric"})
	comparisonVerdicts = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "dbperf_comparison_verdicts",
		Help: "Number of metrics per verdict of a finished BenchmarkComparison.",
	}, []string{"namespace", "comparison", "verdict"})
)

// runsCollector counts runs by phase from the manager's cache at scrape time.
type runsCollector struct {
	reader atomic.Pointer[client.Reader]
	desc   *prometheus.Desc
}

func (c *runsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *runsCollector) Collect(ch chan<- prometheus.Metric) {
	reader := c.reader.Load()
	if reader == nil {
		return
	}
	var runs benchv1.BenchmarkRunList
	if err := (*reader).List(context.Background(), &runs); err != nil {
		return
	}
	counts := map[string]float64{}
	for _, p := range []benchv1.Phase{benchv1.PhasePending, benchv1.PhaseQueued, benchv1.PhaseProvisioning, benchv1.PhasePreparing,
		benchv1.PhaseRunning, benchv1.PhaseCollecting, benchv1.PhaseSucceeded, benchv1.PhaseFailed, benchv1.PhaseInvalid} {
		counts[string(p)] = 0
	}
	for _, r := range runs.Items {
		p := string(r.Status.Phase)
		if p == "" {
			p = string(benchv1.PhasePending)
		}
		counts[p]++
	}
	for p, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, n, p)
	}
}

// changesCollector exports the regressions and improvements each schedule
// has detected over its life, from status.regression in the manager's cache:
// counters that survive a manager restart, so that an alert on their
// increase fires once per regression.
type changesCollector struct {
	reader                   *runsCollector // shares the runs' reader
	regressions, improvement *prometheus.Desc
}

func (c *changesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.regressions
	ch <- c.improvement
}

func (c *changesCollector) Collect(ch chan<- prometheus.Metric) {
	reader := c.reader.reader.Load()
	if reader == nil {
		return
	}
	var list benchv1.BenchmarkScheduleList
	if err := (*reader).List(context.Background(), &list); err != nil {
		return
	}
	for _, s := range list.Items {
		if s.Spec.Regression == nil || s.Status.Regression == nil {
			continue
		}
		metric := WatchedMetricName(s.Spec.Regression)
		ch <- prometheus.MustNewConstMetric(c.regressions, prometheus.CounterValue, float64(s.Status.Regression.RegressionsDetected), s.Namespace, s.Name, metric)
		ch <- prometheus.MustNewConstMetric(c.improvement, prometheus.CounterValue, float64(s.Status.Regression.ImprovementsDetected), s.Namespace, s.Name, metric)
	}
}

var (
	registerOnce sync.Once
	runsByPhase  = &runsCollector{desc: prometheus.NewDesc("dbperf_runs", "BenchmarkRuns by phase.", []string{"phase"}, nil)}
	changes      = &changesCollector{reader: runsByPhase,
		regressions: prometheus.NewDesc("dbperf_schedule_regressions_total", "Regressions a BenchmarkSchedule has detected (opened) over its life.",
			[]string{"namespace", "schedule", "metric"}, nil),
		improvement: prometheus.NewDesc("dbperf_schedule_improvements_total", "Improvements a BenchmarkSchedule has detected (opened) over its life.",
			[]string{"namespace", "schedule", "metric"}, nil)}
)

// Register adds the dbperf metrics to the manager's registry (once
// per process) and counts runs from the given reader (the latest manager's).
func Register(reader client.Reader) {
	runsByPhase.reader.Store(&reader)
	registerOnce.Do(func() {
		crmetrics.Registry.MustRegister(runResult, runValid, comparisonVerdicts, scheduleRegressed, runsByPhase, changes)
	})
}

// RecordRun publishes a finished run's headline numbers.
func RecordRun(run *benchv1.BenchmarkRun) {
	ForgetRun(run.Namespace, run.Name)
	pool, release := runPool(run), run.Labels[benchv1.LabelRelease]
	for _, st := range run.Status.Steps {
		for _, s := range st.Summary {
			if s.N == 0 {
				continue
			}
			runResult.WithLabelValues(run.Namespace, run.Name, run.Status.Workload, s.Name, s.Operation, s.Unit, st.Name, pool, release).Set(s.Median)
		}
	}
	valid := 0.0
	if run.Status.Phase == benchv1.PhaseSucceeded {
		valid = 1
	}
	runValid.WithLabelValues(run.Namespace, run.Name, run.Status.Workload, pool, release, string(run.Status.Phase)).Set(valid)
}

// ForgetRun removes a run's series (the run was deleted).
func ForgetRun(namespace, name string) {
	runResult.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "run": name})
	runValid.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "run": name})
}

// runPool is the pool the run measured: its target's nodes' pool, or, for
// an external target, its load generators'.
func runPool(run *benchv1.BenchmarkRun) string {
	if run.Status.Environment == nil {
		return ""
	}
	for _, role := range []string{"target", "loadgen"} {
		for _, n := range run.Status.Environment.Nodes {
			if n.Pool != "" && slices.Contains(n.Roles, role) {
				return n.Pool
			}
		}
	}
	return ""
}

// RecordComparison publishes a finished comparison's verdict counts.
func RecordComparison(cmp *benchv1.BenchmarkComparison, better, worse, same, unsure int) {
	comparisonVerdicts.DeletePartialMatch(prometheus.Labels{"namespace": cmp.Namespace, "comparison": cmp.Name})
	for v, n := range map[benchv1.ComparisonVerdict]int{
		benchv1.VerdictBetter: better, benchv1.VerdictWorse: worse, benchv1.VerdictNoChange: same, benchv1.VerdictInconclusive: unsure} {
		comparisonVerdicts.WithLabelValues(cmp.Namespace, cmp.Name, string(v)).Set(float64(n))
	}
}

// ScheduleRegressed says whether a schedule's regression is open (its
// Regressed condition is True) for the metric it watches.
func ScheduleRegressed(s *benchv1.BenchmarkSchedule, open bool) {
	v := 0.0
	if open {
		v = 1
	}
	scheduleRegressed.WithLabelValues(s.Namespace, s.Name, WatchedMetricName(s.Spec.Regression)).Set(v)
}

// ForgetSchedule removes a schedule's series (the schedule was deleted).
func ForgetSchedule(namespace, name string) {
	scheduleRegressed.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "schedule": name})
}

// WatchedMetricName labels the regression metric: the policy's metric or,
// by default, the primary one.
func WatchedMetricName(p *benchv1.RegressionPolicy) string {
	if p.Metric == "" {
		return "the primary metric"
	}
	return p.Metric
}
