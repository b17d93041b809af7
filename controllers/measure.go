package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/status"
	"github.com/dbperf-io/dbperf-operator/internal/disturb"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// maxStatusMetrics bounds the metrics kept in status per repetition; the
// results ConfigMap has them all.
const maxStatusMetrics = 16

// A run is one object in etcd (at most 1.5 MiB), so what its status keeps
// of every measurement is bounded by the run as a whole: statusMetricBudget
// metric values over all its measurements (each repetition keeps at least
// its primary metric; a run of 1000 measurements keeps only that, one of up
// to 35 keeps every headline metric and telemetry figure), and a few
// reasons of each, shortened. The results ConfigMap has everything.
const (
	statusMetricBudget   = 1000
	maxStatusReasons     = 5
	maxStatusReasonBytes = 512
)

// statusMetrics are what status keeps of a result: up to maxStatusMetrics
// of the tool's headline metrics, primary first, then the servers' side
// (telemetry.StatusFigures) and the disturbances' cards' headline figures
// (disturb.StatusFigures); everything is in the results ConfigMap.
func statusMetrics(res *results.Result) []results.Metric {
	var out []results.Metric
	for _, m := range res.Headline() {
		if !m.IsTelemetry() && len(out) < maxStatusMetrics {
			out = append(out, m)
		}
	}
	out = append(out, telemetry.StatusFigures(res)...)
	return append(out, disturb.StatusFigures(res)...)
}

// measurement is one measurement: a step and a repetition.
type measurement struct {
	step int
	rep  int32
}

// measurements lists the measurements repetition-major: every step once, then every
// step again, so that drift of the platform over time spreads over all steps.
func measurements(steps, reps int) []measurement {
	out := make([]measurement, 0, steps*reps)
	for rep := 1; rep <= reps; rep++ {
		for s := range steps {
			out = append(out, measurement{step: s, rep: int32(rep)})
		}
	}
	return out
}

func repetitions(run *benchv1.BenchmarkRun) int {
	return max(int(run.Spec.Repetitions), 1)
}

// measure runs the measurements one Job at a time, recording each as soon
// as it finishes.
func (r *BenchmarkRunReconciler) measure(ctx context.Context, st *runState) (ctrl.Result, error) {
	run := st.run
	if run.Spec.Capacity != nil {
		return r.measureLevels(ctx, st)
	}
	steps := st.workload.Steps(&run.Spec.Workload)
	if n := len(steps) * repetitions(run); n > benchv1.MaxMeasurements {
		// The schema refuses such a run; a CRD installed without the rule does not.
		r.failInvalidSpec(st, field.TooMany(field.NewPath("spec"), n, benchv1.MaxMeasurements))
		return ctrl.Result{}, nil
	}
	initSteps(run, steps)
	all := measurements(len(steps), repetitions(run))
	done := 0
	for _, u := range all {
		if recorded(run, u) {
			r.forgetMeasurement(ctx, windowKey(st, specs.MeasureJobName(run, u.step, u.rep)))
		} else if taken, res, err := r.measureOne(ctx, st, steps[u.step], u, fmt.Sprintf("%d/%d", done, len(all)), len(all)-done); !taken {
			return res, err
		}
		done++
	}
	run.Status.Progress = fmt.Sprintf("%d/%d", done, len(all))
	run.Status.Measuring, run.Status.ExpectedCompletionTime = nil, nil
	run.Status.Phase = benchv1.PhaseCollecting
	return ctrl.Result{}, nil
}

// measureOne takes measurement u of step: it creates its Job, watches it,
// and records its outcome. taken is false while the measurement goes on
// (or when the run ended): the reconcile then returns res and err. progress
// is status.progress meanwhile, and left the measurements left with this one.
func (r *BenchmarkRunReconciler) measureOne(ctx context.Context, st *runState, step workloads.Step, u measurement, progress string, left int) (taken bool, _ ctrl.Result, _ error) {
	run := st.run
	disturbed := len(specs.Disturbances(run, u.rep)) > 0
	if !st.target.Ready && (!disturbed || !measuringNow(run, u)) {
		// A disturbed measurement goes on while its target is not ready:
		// losing a member is what it measures.
		return false, r.waitForTarget(st), nil
	}
	inv := st.workload.Run(&run.Spec.Workload, st.target.Endpoint, step)
	job, err := r.ensureJob(ctx, st, benchv1.RoleLoadgen, u.step, u.rep, inv)
	if apierrors.IsInvalid(err) { // a Job Kubernetes refuses: retrying cannot help
		r.failInvalidSpec(st, err)
		return false, ctrl.Result{}, nil
	}
	if err != nil {
		return false, ctrl.Result{}, err
	}
	out, err := r.jobOutcome(ctx, st, job)
	var wait time.Duration
	if err == nil && out == nil {
		var ended bool
		var res ctrl.Result
		out, ended, res, err = r.measuring(ctx, st, job)
		if ended || err != nil {
			return false, res, err
		}
		wait = res.RequeueAfter
	}
	if err == nil {
		var settle time.Duration
		settle, err = r.resources(ctx, st, job, out) // with no outcome: starts the sampler
		if out != nil {
			wait = settle
		}
	}
	if disturbed && err == nil {
		var look time.Duration
		if look, err = r.disturbances(ctx, st, job, u, out); look > 0 && (wait == 0 || look < wait) {
			wait = look
		}
	}
	if err != nil || out == nil || wait > 0 {
		run.Status.Progress = progress
		started := job.CreationTimestamp
		run.Status.Measuring = &benchv1.MeasurementProgress{Step: step.Name, Repetition: u.rep, Job: job.Name, StartTime: &started}
		run.Status.ExpectedCompletionTime = expectedCompletion(run, left, started.Time)
		if st.declared > 0 { // a confirmation or a soak: its own duration, not the levels' mean
			run.Status.ExpectedCompletionTime = declaredCompletion(run, st.declared*time.Duration(left), started.Time)
		}
		msg := fmt.Sprintf("measuring step %s, repetition %d (job %s)", step.Name, u.rep, job.Name)
		if st.waiting != "" {
			msg += ": " + st.waiting
		}
		if !st.podStuck { // else Completed names the pod that cannot start
			setCondition(run, benchv1.ConditionCompleted, metav1.ConditionFalse, benchv1.ReasonMeasuring, msg)
		}
		return false, ctrl.Result{RequeueAfter: wait}, err
	}
	if disturbed {
		addDisturbances(run, job, out.result)
	}
	results.AddAPDEX(out.result, apdexTargets(run))
	results.AddOverallAPDEX(out.result, apdexWeights(run))
	if err := r.judgeTarget(ctx, st, out.result, timeOf(out.started), timeOf(out.finished)); err != nil {
		return false, ctrl.Result{}, err
	}
	judgeRules(run, out.result)
	if err := r.judgeZones(ctx, st, job, out.result); err != nil {
		return false, ctrl.Result{}, err
	}
	stored, err := r.storeMeasurement(ctx, st, u, out.result)
	if err != nil {
		return false, ctrl.Result{}, err
	}
	out.result = stored
	recordMeasurement(run, u, job.Name, out)
	if _, reason, msg := verdict(run); reason == benchv1.ReasonSomeFailed || reason == benchv1.ReasonSomeInvalid {
		setCondition(run, benchv1.ConditionValid, metav1.ConditionFalse, reason, msg)
	}
	st.note(out.result.Verdict != results.Succeeded, "Measured", "step %s repetition %d: %s%s",
		step.Name, u.rep, out.result.Verdict, headline(out.result))
	return true, ctrl.Result{}, nil
}

// measuring watches a measurement's Job while its load generators have not
// ended: a pod that cannot start is named on Completed (and ends the run
// past spec.deadlines.podStart); once all are scheduled the measure
// deadline runs, and past it the measurement is a failed outcome (reason
// DeadlineExceeded) and its Job is stopped. The result's wait is when to
// look again.
func (r *BenchmarkRunReconciler) measuring(ctx context.Context, st *runState, job *batchv1.Job) (out *outcome, ended bool, res ctrl.Result, err error) {
	run := st.run
	w, err := r.jobPods(ctx, job)
	if err != nil {
		return nil, false, ctrl.Result{}, err
	}
	if w.stuck != nil {
		ended, res, err = r.podNotStarted(ctx, st, benchv1.ConditionCompleted, "measurement job "+job.Name, w.stuck)
		return nil, ended, res, err
	}
	limit := run.Spec.Deadlines.MeasureDeadline(longestMeasurement(run))
	if st.declared > 0 {
		// A measurement held longer than the others (a capacity
		// confirmation) gets the deadline of its own duration.
		limit = max(limit, benchv1.DefaultMeasureFactor*st.declared+benchv1.DefaultMeasureMargin)
	}
	passed, wait := st.phaseDeadline("job "+job.Name, w.clock, limit)
	if !w.scheduled || !passed {
		return nil, false, ctrl.Result{RequeueAfter: w.lookAgain(wait)}, nil
	}
	if err := r.expireJob(ctx, st, job); err != nil {
		return nil, false, ctrl.Result{}, err
	}
	from := "spec.deadlines.measure"
	if run.Spec.Deadlines.Measure == nil {
		from = fmt.Sprintf("the default measure deadline, %d × the longest measurement so far + %s", benchv1.DefaultMeasureFactor, benchv1.DefaultMeasureMargin)
	}
	r0 := results.New(st.workload.Name())
	r0.Fail("%s: the measurement did not end within %s (%s) of its load generators' scheduling at %s; job %s was stopped",
		benchv1.ReasonDeadlineExceeded, limit, from, w.clock.UTC().Format(time.RFC3339), job.Name)
	// Its window ends at the deadline, a fixed instant: a look again
	// (waiting for Prometheus to scrape the window's end) finds the same.
	clock, at := metav1.NewTime(w.clock), metav1.NewTime(w.clock.Add(limit))
	run.Status.Deadline = nil
	return &outcome{result: r0, started: &clock, finished: &at}, false, ctrl.Result{}, nil
}

// expectedCompletion is when a run with left measurements to take (the
// first of them started at from) should end: the mean duration of the
// measurements it has recorded, each of the left ones; at most its
// timeout. Nil before any measurement is recorded: a guess from nothing
// would mislead. It depends only on status, so a reconcile that changes
// nothing else writes nothing.
func expectedCompletion(run *benchv1.BenchmarkRun, left int, from time.Time) *metav1.Time {
	var sum time.Duration
	n := 0
	for _, s := range run.Status.Steps {
		for _, r := range s.Repetitions {
			if r.StartTime != nil && r.CompletionTime != nil && r.CompletionTime.After(r.StartTime.Time) {
				sum += r.CompletionTime.Sub(r.StartTime.Time)
				n++
			}
		}
	}
	if n == 0 || left <= 0 {
		return nil
	}
	return declaredCompletion(run, sum/time.Duration(n)*time.Duration(left), from)
}

// declaredCompletion is from + d, at most the run's timeout.
func declaredCompletion(run *benchv1.BenchmarkRun, d time.Duration, from time.Time) *metav1.Time {
	eta := from.Add(d).Truncate(time.Second)
	if start := run.Status.StartTime; start != nil && eta.After(start.Add(timeout(run))) {
		eta = start.Add(timeout(run))
	}
	t := metav1.NewTime(eta)
	return &t
}

func headline(r *results.Result) string {
	if len(r.Reasons) > 0 {
		return " (" + status.Truncate(strings.Join(r.Reasons, "; "), 300) + ")"
	}
	if m, ok := r.Get(r.Primary); ok {
		return fmt.Sprintf(", %s %s", formatValue(m.Value), m.Unit)
	}
	return ""
}

// initSteps lays out one status entry per step of the sweep.
func initSteps(run *benchv1.BenchmarkRun, steps []workloads.Step) {
	if len(run.Status.Steps) == len(steps) {
		return
	}
	run.Status.Steps = make([]benchv1.StepStatus, len(steps))
	for i, s := range steps {
		params := map[string]string{}
		for k, v := range s.Params {
			params[k] = fmt.Sprint(v)
		}
		run.Status.Steps[i] = benchv1.StepStatus{Name: s.Name, Parameters: params}
	}
}

func recorded(run *benchv1.BenchmarkRun, u measurement) bool {
	for _, rep := range run.Status.Steps[u.step].Repetitions {
		if rep.Index == u.rep {
			return true
		}
	}
	return false
}

// recordMeasurement puts a measurement into status and refreshes its step's summary.
func recordMeasurement(run *benchv1.BenchmarkRun, u measurement, job string, out *outcome) {
	res := out.result
	if !knownVerdict(res.Verdict) {
		// A status with it would be refused, and the run stuck retrying.
		res.Fail("the load generator reported the verdict %q, which is none of Succeeded, Failed and Invalid", res.Verdict)
	}
	rs := benchv1.RepetitionStatus{
		Index: u.rep, Job: job, Verdict: res.Verdict, Reasons: statusReasons(res.Reasons), Node: out.node,
		StartTime: out.started, CompletionTime: out.finished,
	}
	if lg := res.LoadGenerator; lg != nil && lg.Source != "" {
		pct := status.Round(lg.CPUPercent, 1)
		rs.LoadGeneratorCPUPercent = &pct
	}
	kept := statusMetrics(res)
	kept = kept[:min(len(kept), metricsPerRepetition(run))]
	for _, m := range kept {
		rs.Metrics = append(rs.Metrics, benchv1.MetricValue{
			Name: m.Name, Operation: m.Operation, Value: m.Value, Unit: m.Unit, Direction: statusDirection(m.Direction), Source: m.Source,
		})
	}
	step := &run.Status.Steps[u.step]
	step.Repetitions = append(step.Repetitions, rs)
	// Summaries cover valid repetitions only, so nothing else changes them;
	// and a failed result may not even name the primary metric (a load
	// generator killed before the runner wrote its summary).
	if res.Verdict == results.Succeeded {
		summarizeStep(run, step, res.Primary)
		updatePrimary(run, res.Primary)
	}
}

// metricsPerRepetition is how many metrics status keeps of each of the
// run's measurements: statusMetricBudget shared among them, at least one.
func metricsPerRepetition(run *benchv1.BenchmarkRun) int {
	return max(1, statusMetricBudget/max(1, len(run.Status.Steps)*repetitions(run)))
}

func knownVerdict(v results.Verdict) bool {
	return v == results.Succeeded || v == results.Failed || v == results.Invalid
}

// statusDirection is a metric's direction as status may hold it: one the
// API does not know is Neutral (never judged), as it is to a comparison.
func statusDirection(d results.Direction) benchv1.Direction {
	switch d {
	case benchv1.HigherIsBetter, benchv1.LowerIsBetter:
		return d
	}
	return benchv1.Neutral
}

// statusReasons are the first maxStatusReasons reasons, each shortened to
// maxStatusReasonBytes, and how many more the results ConfigMap has.
func statusReasons(reasons []string) []string {
	var out []string
	for i, r := range reasons {
		if i == maxStatusReasons {
			out = append(out, fmt.Sprintf("(%d more reasons in the results ConfigMap)", len(reasons)-i))
			break
		}
		out = append(out, status.Truncate(r, maxStatusReasonBytes))
	}
	return out
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}

// apdexWeights are the run's APDEX weights by operation (1 when unset).
func apdexWeights(run *benchv1.BenchmarkRun) map[string]float64 {
	if len(run.Spec.APDEX) == 0 {
		return nil
	}
	out := map[string]float64{}
	for _, a := range run.Spec.APDEX {
		out[a.Operation] = float64(max(a.Weight, 1))
	}
	return out
}

// apdexTargets are the run's APDEX target times by operation.
func apdexTargets(run *benchv1.BenchmarkRun) map[string]time.Duration {
	if len(run.Spec.APDEX) == 0 {
		return nil
	}
	out := map[string]time.Duration{}
	for _, a := range run.Spec.APDEX {
		out[a.Operation] = a.Target.Duration
	}
	return out
}

// anyRecorded says whether the run has recorded a measurement.
func anyRecorded(run *benchv1.BenchmarkRun) bool {
	for _, s := range run.Status.Steps {
		if len(s.Repetitions) > 0 {
			return true
		}
	}
	return false
}
