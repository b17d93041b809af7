package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// maxStatusMetrics bounds the metrics kept in status per repetition; the
// results ConfigMap has them all.
const maxStatusMetrics = 16

// statusMetrics are what status keeps of a result: up to maxStatusMetrics
// of the tool's headline metrics, primary first, then the servers' side
// (telemetry.StatusFigures); everything is in the results ConfigMap.
func statusMetrics(res *results.Result) []results.Metric {
	var out []results.Metric
	for _, m := range res.Headline() {
		if !m.IsTelemetry() && len(out) < maxStatusMetrics {
			out = append(out, m)
		}
	}
	return append(out, telemetry.StatusFigures(res)...)
}

// unit is one measurement: a step and a repetition.
type unit struct {
	step int
	rep  int32
}

// units lists the measurements repetition-major: every step once, then every
// step again, so that drift of the platform over time spreads over all steps.
func units(steps, reps int) []unit {
	out := make([]unit, 0, steps*reps)
	for rep := 1; rep <= reps; rep++ {
		for s := range steps {
			out = append(out, unit{step: s, rep: int32(rep)})
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
	steps := st.workload.Steps(&run.Spec.Workload)
	initSteps(run, steps)
	all := units(len(steps), repetitions(run))
	done := 0
	for _, u := range all {
		if recorded(run, u) {
			r.forgetMeasurement(ctx, measurementKey(st, specs.MeasureJobName(run, u.step, u.rep)))
			done++
			continue
		}
		if !st.target.Ready {
			return r.waitForTarget(st), nil
		}
		inv := st.workload.Run(&run.Spec.Workload, st.target.Endpoint, steps[u.step])
		job, err := r.ensureJob(ctx, st, specs.RoleLoadgen, u.step, u.rep, inv)
		if err != nil {
			return ctrl.Result{}, err
		}
		out, err := r.jobOutcome(ctx, st, job)
		var wait time.Duration
		if err == nil {
			wait, err = r.resources(ctx, st, job, out)
		}
		if err != nil || out == nil || wait > 0 {
			run.Status.Progress = fmt.Sprintf("%d/%d", done, len(all))
			msg := fmt.Sprintf("measuring step %s, repetition %d (job %s)", steps[u.step].Name, u.rep, job.Name)
			if st.waiting != "" {
				msg += ": " + st.waiting
			}
			setCondition(run, benchv1.ConditionCompleted, metav1.ConditionFalse, benchv1.ReasonMeasuring, msg)
			return ctrl.Result{RequeueAfter: wait}, err
		}
		results.AddAPDEX(out.result, apdexTargets(run))
		if err := r.judgeTarget(ctx, st, out.result, timeOf(out.started), timeOf(out.finished)); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.judgeZones(ctx, st, job, out.result); err != nil {
			return ctrl.Result{}, err
		}
		stored, err := r.storeUnit(ctx, st, u, out.result)
		if err != nil {
			return ctrl.Result{}, err
		}
		out.result = stored
		recordUnit(run, u, job.Name, out)
		if _, reason, msg := verdict(run); reason == benchv1.ReasonSomeFailed || reason == benchv1.ReasonSomeInvalid {
			setCondition(run, benchv1.ConditionValid, metav1.ConditionFalse, reason, msg)
		}
		r.Recorder.Eventf(run, eventTypeFor(out.result.Verdict), "Measured", "Step %s repetition %d: %s%s",
			steps[u.step].Name, u.rep, out.result.Verdict, headline(out.result))
		done++
	}
	run.Status.Progress = fmt.Sprintf("%d/%d", done, len(all))
	run.Status.Phase = benchv1.PhaseCollecting
	return ctrl.Result{}, nil
}

func eventTypeFor(v results.Verdict) string {
	if v == results.Succeeded {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}

func headline(r *results.Result) string {
	if len(r.Reasons) > 0 {
		return " (" + truncate(strings.Join(r.Reasons, "; "), 300) + ")"
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

func recorded(run *benchv1.BenchmarkRun, u unit) bool {
	for _, rep := range run.Status.Steps[u.step].Repetitions {
		if rep.Index == u.rep {
			return true
		}
	}
	return false
}

// recordUnit puts a measurement into status and refreshes its step's summary.
func recordUnit(run *benchv1.BenchmarkRun, u unit, job string, out *outcome) {
	res := out.result
	rs := benchv1.RepetitionStatus{
		Index: u.rep, Job: job, Verdict: benchv1.Verdict(res.Verdict), Reasons: res.Reasons, Node: out.node,
		StartTime: out.started, CompletionTime: out.finished,
	}
	if lg := res.LoadGenerator; lg != nil && lg.Source != "" {
		pct := roundTo(lg.CPUPercent, 1)
		rs.LoadGeneratorCPUPercent = &pct
	}
	for _, m := range statusMetrics(res) {
		rs.Metrics = append(rs.Metrics, benchv1.MetricValue{
			Name: m.Name, Operation: m.Operation, Value: m.Value, Unit: m.Unit, Direction: benchv1.Direction(m.Direction), Source: m.Source,
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

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
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
