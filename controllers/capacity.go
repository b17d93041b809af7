package controllers

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/status"
	"github.com/dbperf-io/dbperf-operator/internal/capacity"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// A capacity run (spec.capacity) measures load levels one after another
// instead of the sweep: each level is a step appended to status.steps and
// to status.capacity.levels, measured spec.repetitions times, judged on
// its stored results (capacity.Judge), and the next level is decided from
// the judged ones (capacity.Decide). Both are pure functions of what is
// stored, so a reconcile run twice, after a refused status write or in a
// restarted manager decides the same level, which has the same Job name:
// no level is measured twice and none is lost.

// measureLevels is the measuring phase of a capacity run.
func (r *BenchmarkRunReconciler) measureLevels(ctx context.Context, st *runState) (ctrl.Result, error) {
	run := st.run
	c := run.Spec.Capacity
	base, errs := capacityBase(run, st.workload)
	if len(errs) > 0 {
		r.failInvalidSpec(st, errs.ToAggregate())
		return ctrl.Result{}, nil
	}
	if run.Status.Capacity == nil {
		run.Status.Capacity = &benchv1.CapacityStatus{Parameter: c.Parameter, CoordinatedOmission: coordinatedOmission(run, st.workload)}
		if w := uncorrectedWarning(run, st.workload); w != "" {
			st.note(true, "LatencyUncorrected", "%s", w)
		}
	}
	cs := run.Status.Capacity
	if cs.Soak != nil { // the search has ended and its soak started
		return r.measureSoak(ctx, st, base)
	}
	plan := capacity.PlanOf(c)
	for {
		if i := len(cs.Levels) - 1; i >= 0 && cs.Levels[i].Passed == nil {
			if len(cs.Levels[i].Reasons) == 0 {
				done, res, err := r.measureLevel(ctx, st, base, i)
				if !done || err != nil {
					return res, err
				}
			}
			if cs.Levels[i].Passed == nil { // it could not be judged
				return r.endLevels(st, capacity.Decide(plan, judgedLevels(cs), false), benchv1.CapacityMeasurementFailed,
					fmt.Sprintf("level %d: %s", cs.Levels[i].Value, cs.Levels[i].Reasons[0]))
			}
		}
		d := capacity.Decide(plan, judgedLevels(cs), timeUp(st))
		if !d.Done {
			if why := generatorLimit(run, cs, d.Next); why != "" {
				if d.Maximum != nil {
					why += fmt.Sprintf("; %d, the largest level that passed, is a lower bound of the maximum", *d.Maximum)
				}
				d.Done, d.Reason, d.Next, d.Message = true, benchv1.CapacityGeneratorLimit, 0, why
			}
		}
		next, confirm := d.Next, false
		if d.Done {
			var end *confirmEnd
			if next, end = confirmation(c, cs, d); end != nil {
				cs.Confirmed = end.confirmed
				if end.reason == benchv1.CapacityConfirmationFailed {
					// The maximum reported is the one the second confirmation did not hold.
					d = capacity.Decide(plan, judgedLevels(&benchv1.CapacityStatus{Levels: cs.Levels[:len(cs.Levels)-1]}), false)
				}
				return r.endSearch(ctx, st, base, d, end.reason, end.message)
			}
			confirm = true
		}
		lvl := benchv1.CapacityLevel{Value: next, Step: fmt.Sprintf("%s=%d", c.Parameter, next), Confirm: confirm}
		if confirm {
			lvl.Step += fmt.Sprintf(",confirm=%d", len(confirms(cs))+1)
		}
		params := map[string]string{}
		for k, v := range levelStep(run, base, lvl).Params {
			params[k] = fmt.Sprint(v)
		}
		run.Status.Steps = append(run.Status.Steps, benchv1.StepStatus{Name: lvl.Step, Parameters: params})
		cs.Levels = append(cs.Levels, lvl)
		st.note(false, "Level", "measuring level %s", lvl.Step)
	}
}

// confirmEnd is how a capacity run ends after its confirmations.
type confirmEnd struct {
	reason    benchv1.CapacityStopReason
	message   string
	confirmed *bool
}

// confirmation decides, once the search has ended with d, whether a
// confirmation is measured next (its level) or the run ends (end): without
// spec.capacity.confirm or a maximum, at once; after a confirmation that
// held, confirmed; after a first that failed (a failing level to the
// search, which reopened below it and ended again), a second; after a
// second that failed, with stop reason ConfirmationFailed.
func confirmation(c *benchv1.CapacitySpec, cs *benchv1.CapacityStatus, d capacity.Decision) (int32, *confirmEnd) {
	if c.Confirm == nil {
		return 0, &confirmEnd{reason: d.Reason, message: d.Message}
	}
	if d.Maximum == nil { // nothing left to confirm; a failed confirmation may have led here
		var confirmed *bool
		if len(confirms(cs)) > 0 {
			confirmed = new(bool)
		}
		return 0, &confirmEnd{reason: d.Reason, message: d.Message, confirmed: confirmed}
	}
	fraction := int64(c.Confirm.FractionPercent)
	if fraction == 0 {
		fraction = 100
	}
	target := int32(max(1, int64(*d.Maximum)*fraction/100))
	held := confirms(cs)
	if len(held) == 0 {
		return target, nil
	}
	last := held[len(held)-1]
	passed := last.Passed != nil && *last.Passed
	switch {
	case passed:
		return 0, &confirmEnd{reason: d.Reason, confirmed: &passed,
			message: fmt.Sprintf("%s; confirmed: %s held", d.Message, last.Step)}
	case len(held) == 1:
		return target, nil
	}
	return 0, &confirmEnd{reason: benchv1.CapacityConfirmationFailed, confirmed: &passed,
		message: fmt.Sprintf("the confirmation failed twice, the search reopened below the first: %s failed (%s); the maximum it held is not confirmed",
			last.Step, firstReason(last.Reasons))}
}

func confirms(cs *benchv1.CapacityStatus) []benchv1.CapacityLevel {
	var out []benchv1.CapacityLevel
	for _, l := range cs.Levels {
		if l.Confirm {
			out = append(out, l)
		}
	}
	return out
}

// levelStep is the step that measures a level: the sweep's one step with
// the level's value, and a confirmation's own duration.
func levelStep(run *benchv1.BenchmarkRun, base workloads.Step, lvl benchv1.CapacityLevel) workloads.Step {
	var held *metav1.Duration
	if lvl.Confirm {
		held = run.Spec.Capacity.Confirm.Duration
	}
	return stepAt(run, base, lvl.Step, lvl.Value, held)
}

// stepAt is the sweep's one step named name with the capacity parameter
// at value, held for its own duration when held is set.
func stepAt(run *benchv1.BenchmarkRun, base workloads.Step, name string, value int32, held *metav1.Duration) workloads.Step {
	step := workloads.Step{Name: name, Params: maps.Clone(base.Params)}
	if step.Params == nil {
		step.Params = map[string]int32{}
	}
	step.Params[run.Spec.Capacity.Parameter] = value
	if held != nil {
		step.Params[workloads.DurationParameter] = int32(min(held.Seconds(), math.MaxInt32))
	}
	return step
}

// measureLevel measures level i's repetitions (and one more when one of
// them failed or was invalid), then judges it. done is false while it is
// being measured. A level that cannot be judged (its retry failed too, or
// a rule's figure is missing) gets reasons and no verdict.
func (r *BenchmarkRunReconciler) measureLevel(ctx context.Context, st *runState, base workloads.Step, i int) (done bool, _ ctrl.Result, _ error) {
	run, cs := st.run, st.run.Status.Capacity
	lvl := &cs.Levels[i]
	step := levelStep(run, base, *lvl)
	st.declared = 0
	if d, ok := step.Params[workloads.DurationParameter]; ok {
		st.declared = time.Duration(d) * time.Second
	}
	reps := int32(repetitions(run))
	for rep := int32(1); rep <= reps+1; rep++ {
		u := measurement{step: i, rep: rep}
		if rep > reps {
			if allSucceeded(run.Status.Steps[i]) {
				break
			}
			lvl.Retried = true // one of the level's repetitions failed or was invalid: measure it once more
		}
		if recorded(run, u) {
			r.forgetMeasurement(ctx, windowKey(st, specs.MeasureJobName(run, u.step, u.rep)))
			continue
		}
		progress := fmt.Sprintf("level %d (%s), repetition %d/%d", i+1, lvl.Step, rep, reps)
		if taken, res, err := r.measureOne(ctx, st, step, u, progress, int(reps-rep+1)); !taken {
			return false, res, err
		}
	}
	measured := run.Status.Steps[i].Repetitions
	if last := measured[len(measured)-1]; lvl.Retried && last.Verdict != benchv1.VerdictSucceeded {
		lvl.Reasons = []string{fmt.Sprintf("measured again after a %s measurement, it was %s again: %s", last.Verdict, last.Verdict, firstReason(last.Reasons))}
		return true, ctrl.Result{}, nil
	}
	stored, err := r.levelResults(ctx, st, i)
	if err != nil {
		return false, ctrl.Result{}, err
	}
	in := capacity.Input{Value: lvl.Value, Rate: cs.Parameter == workloads.RateParameter, Results: stored}
	for _, l := range cs.Levels[:i] {
		if !lvl.Confirm && l.Passed != nil && *l.Passed && l.Value < lvl.Value && l.Throughput != nil && (in.Previous == nil || l.Value > in.Previous.Value) {
			in.Previous = &capacity.Previous{Value: l.Value, Throughput: *l.Throughput}
		}
	}
	j := capacity.Judge(&run.Spec.Capacity.Rules, in)
	if r := run.Spec.Capacity.ExceedRatioPercent; r != nil {
		j = capacity.JudgeTrials(&run.Spec.Capacity.Rules, in, float64(*r))
	}
	lvl.Throughput, lvl.AchievedPercent, lvl.LatencyMillis, lvl.LatencyOverLimitPercent = roundPtr(j.Throughput), j.Achieved, j.LatencyMillis, j.OverLimitShare
	lvl.LoadGeneratorCPUMicrosPerOperation = j.GeneratorCPUMicrosPerOp
	if j.Unjudgeable != "" {
		lvl.Reasons = []string{j.Unjudgeable}
		return true, ctrl.Result{}, nil
	}
	passed := j.Passed
	lvl.Passed, lvl.Reasons = &passed, statusReasons(j.Reasons)
	verdict := "passed"
	if !passed {
		verdict = "failed: " + status.Truncate(j.Reasons[0], 300)
	}
	st.note(false, "LevelJudged", "level %s %s", lvl.Step, verdict)
	return true, ctrl.Result{}, nil
}

// endSearch ends the search with what it found, then starts its soak
// (spec.capacity.soak) when there is a maximum to hold, confirmed when a
// confirmation was asked for, or ends the measuring phase.
func (r *BenchmarkRunReconciler) endSearch(ctx context.Context, st *runState, base workloads.Step, d capacity.Decision, reason benchv1.CapacityStopReason, msg string) (ctrl.Result, error) {
	run, cs, c := st.run, st.run.Status.Capacity, st.run.Spec.Capacity
	if c.Soak == nil {
		return r.endLevels(st, d, reason, msg)
	}
	if d.Maximum == nil || c.Confirm != nil && (cs.Confirmed == nil || !*cs.Confirmed) {
		why := "no level passed"
		if d.Maximum != nil {
			why = "the maximum was not confirmed"
		}
		return r.endLevels(st, d, reason, fmt.Sprintf("%s; no soak: %s", msg, why))
	}
	r.settleSearch(st, d, reason, msg)
	value := int32(max(1, int64(*cs.Maximum)*int64(capacity.SoakPercent(c.Soak))/100))
	cs.Soak = &benchv1.CapacitySoakStatus{Value: value, Step: fmt.Sprintf("%s=%d,soak", c.Parameter, value), Attempts: 1}
	params := map[string]string{}
	for k, v := range soakStep(run, base).Params {
		params[k] = fmt.Sprint(v)
	}
	run.Status.Steps = append(run.Status.Steps, benchv1.StepStatus{Name: cs.Soak.Step, Parameters: params})
	st.note(false, "Soak", "soaking at %s (%d %% of the maximum %d) for %s", cs.Soak.Step, capacity.SoakPercent(c.Soak), *cs.Maximum, c.Soak.Duration.Duration)
	return r.measureSoak(ctx, st, base)
}

// soakStep is the step that measures the soak: the sweep's one step at
// the soak's level, for the soak's duration.
func soakStep(run *benchv1.BenchmarkRun, base workloads.Step) workloads.Step {
	sk := run.Status.Capacity.Soak
	return stepAt(run, base, sk.Step, sk.Value, &run.Spec.Capacity.Soak.Duration)
}

// measureSoak measures the soak, the run's last step: one measurement,
// measured once more from its start when it failed or was invalid (a
// load-generator pod lost, a node gone), which status and an event say;
// a manager restart does not restart it, its Job runs on and is adopted.
// Then it judges the soak's trends and ends the measuring phase.
func (r *BenchmarkRunReconciler) measureSoak(ctx context.Context, st *runState, base workloads.Step) (ctrl.Result, error) {
	run, cs, c := st.run, st.run.Status.Capacity, st.run.Spec.Capacity
	sk := cs.Soak
	if sk.Passed != nil || len(sk.Reasons) > 0 { // judged: a refused write of the phase's end
		return r.finishLevels(st)
	}
	i := len(run.Status.Steps) - 1
	step := soakStep(run, base)
	st.declared = c.Soak.Duration.Duration
	for rep := int32(1); rep <= 2; rep++ {
		u := measurement{step: i, rep: rep}
		if rep == 2 {
			if allSucceeded(run.Status.Steps[i]) {
				break
			}
			if first := run.Status.Steps[i].Repetitions[0]; sk.Attempts < 2 {
				sk.Attempts = 2
				sk.Restarts = status.Truncate(fmt.Sprintf("the first attempt (job %s) ended %s after %s: %s; the soak was measured again from its start",
					first.Job, first.Verdict, attemptLength(first), firstReason(first.Reasons)), 1024)
				st.note(true, "SoakRestarted", "%s", sk.Restarts)
			}
		}
		if recorded(run, u) {
			r.forgetMeasurement(ctx, windowKey(st, specs.MeasureJobName(run, u.step, u.rep)))
			continue
		}
		progress := fmt.Sprintf("soak at %s (%d %% of the maximum %d) for %s, attempt %d", sk.Step, capacity.SoakPercent(c.Soak), ptr.Deref(cs.Maximum, 0), c.Soak.Duration.Duration, rep)
		if taken, res, err := r.measureOne(ctx, st, step, u, progress, 1); !taken {
			return res, err
		}
	}
	measured := run.Status.Steps[i].Repetitions
	if last := measured[len(measured)-1]; last.Verdict != benchv1.VerdictSucceeded {
		sk.Reasons = []string{status.Truncate(fmt.Sprintf("measured twice, the soak was %s both times: %s", last.Verdict, firstReason(last.Reasons)), 1024)}
		st.note(true, "SoakJudged", "the soak at %s could not be judged: %s", sk.Step, sk.Reasons[0])
		return r.finishLevels(st)
	}
	stored, err := r.levelResults(ctx, st, i)
	if err != nil {
		return ctrl.Result{}, err
	}
	var latency *benchv1.LatencyRule
	if len(c.Rules.Latency) > 0 {
		latency = &c.Rules.Latency[0]
	}
	var warmup time.Duration
	if w := run.Spec.Workload.Warmup; w != nil {
		warmup = w.Duration
	}
	j := capacity.JudgeSoak(c.Soak, latency, stored[len(stored)-1], warmup)
	sk.Checks, sk.Reasons = j.Checks, statusReasons(j.Reasons)
	verdict := "held"
	if j.Unjudgeable != "" {
		sk.Reasons = []string{j.Unjudgeable}
		verdict = "could not be judged: " + j.Unjudgeable
	} else {
		passed := j.Passed
		sk.Passed = &passed
		if !passed {
			verdict = "failed: " + status.Truncate(j.Reasons[0], 300)
		}
	}
	st.note(sk.Passed == nil || !*sk.Passed, "SoakJudged", "the soak at %s %s", sk.Step, verdict)
	return r.finishLevels(st)
}

func attemptLength(m benchv1.RepetitionStatus) string {
	if m.StartTime == nil || m.CompletionTime == nil {
		return "an unknown time"
	}
	return m.CompletionTime.Sub(m.StartTime.Time).Round(time.Second).String()
}

// endLevels ends the measuring phase of a capacity run with what it found.
func (r *BenchmarkRunReconciler) endLevels(st *runState, d capacity.Decision, reason benchv1.CapacityStopReason, msg string) (ctrl.Result, error) {
	r.settleSearch(st, d, reason, msg)
	return r.finishLevels(st)
}

// finishLevels ends the measuring phase of a capacity run.
func (r *BenchmarkRunReconciler) finishLevels(st *runState) (ctrl.Result, error) {
	run, cs := st.run, st.run.Status.Capacity
	found := "no level passed"
	if cs.Maximum != nil {
		found = fmt.Sprintf("maximum %s=%d", cs.Parameter, *cs.Maximum)
	}
	if sk := cs.Soak; sk != nil {
		switch {
		case sk.Passed == nil:
			found += ", soak not judged"
		case *sk.Passed:
			found += ", soak held"
		default:
			found += ", soak failed"
		}
	}
	run.Status.Progress = fmt.Sprintf("%d levels, %s", len(cs.Levels), found)
	run.Status.Measuring, run.Status.ExpectedCompletionTime = nil, nil
	run.Status.Phase = benchv1.PhaseCollecting
	return ctrl.Result{}, nil
}

// settleSearch records what the search found.
func (r *BenchmarkRunReconciler) settleSearch(st *runState, d capacity.Decision, reason benchv1.CapacityStopReason, msg string) {
	run, cs := st.run, st.run.Status.Capacity
	cs.Maximum, cs.SmallestFailing, cs.NonMonotonic = d.Maximum, d.SmallestFailing, d.NonMonotonic
	cs.StopReason, cs.Message = reason, status.Truncate(msg, 1024)
	cs.Throughput = nil
	if d.Maximum != nil {
		for k, l := range cs.Levels {
			if l.Value == *d.Maximum && l.Throughput != nil {
				for _, m := range run.Status.Steps[k].Summary {
					if run.Status.Primary != nil && m.Name == run.Status.Primary.Name && m.Operation == run.Status.Primary.Operation {
						cs.Throughput = &benchv1.MetricValue{Name: m.Name, Operation: m.Operation, Value: m.Median, Unit: m.Unit, Direction: m.Direction}
					}
				}
			}
		}
	}
	found := "no level passed"
	if d.Maximum != nil {
		found = fmt.Sprintf("maximum %s=%d", cs.Parameter, *d.Maximum)
	}
	st.note(reason == benchv1.CapacityMeasurementFailed, "CapacityFound", "%s (%s): %s", found, reason, cs.Message)
}

// levelResults reads level i's stored measurements that succeeded. The
// cache may be behind the status that records them: a result missing from
// it is read from the API server.
func (r *BenchmarkRunReconciler) levelResults(ctx context.Context, st *runState, i int) ([]*results.Result, error) {
	run := st.run
	var want []string
	var reps []int32
	for _, rep := range run.Status.Steps[i].Repetitions {
		if rep.Verdict == benchv1.VerdictSucceeded {
			want, reps = append(want, specs.MeasurementKey(i, rep.Index)), append(reps, rep.Index)
		}
	}
	key := client.ObjectKey{Namespace: run.Namespace, Name: specs.ResultsConfigMapName(run)}
	readers := []client.Reader{r.Client}
	if st.results != nil {
		readers = []client.Reader{written{st.results}}
	}
	if r.APIReader != nil {
		readers = append(readers, r.APIReader)
	}
	var missing string
	for _, reader := range readers {
		cm := &corev1.ConfigMap{}
		if err := reader.Get(ctx, key, cm); err != nil {
			return nil, fmt.Errorf("while reading the results of level %d: %w", i+1, err)
		}
		stored, err := unpackMeasurements(cm)
		if err != nil {
			return nil, err
		}
		// A finish whose status write was refused moved them into its document.
		doc, err := specs.ReadDocument(cm)
		if err != nil {
			return nil, err
		}
		var out []*results.Result
		missing = ""
		for n, k := range want {
			if res, ok := stored[k]; ok {
				out = append(out, res)
			} else if res := doc.Result(run.Status.Steps[i].Name, reps[n]); res != nil { // nil-safe
				out = append(out, res)
			} else {
				missing = k
			}
		}
		if missing == "" {
			return out, nil
		}
	}
	return nil, fmt.Errorf("the results configmap does not hold %s, which status records", missing)
}

// capacityBase checks a capacity run's spec against its tool, naming the
// field, and returns the step the levels vary: the sweep's one step.
func capacityBase(run *benchv1.BenchmarkRun, w workloads.Workload) (workloads.Step, field.ErrorList) {
	c := run.Spec.Capacity
	path := field.NewPath("spec", "capacity")
	steps := w.Steps(&run.Spec.Workload)
	var errs field.ErrorList
	if len(steps) != 1 {
		errs = append(errs, field.Invalid(path, c.Parameter, fmt.Sprintf("the workload sweeps %d steps (%s, ...): a capacity run varies one parameter, so each swept list must hold one value",
			len(steps), steps[0].Name)))
		return workloads.Step{}, errs
	}
	base := steps[0]
	_, knob := w.(workloads.RateKnob)
	_, swept := base.Params[c.Parameter]
	switch {
	case c.Parameter == workloads.RateParameter && !knob:
		errs = append(errs, field.NotSupported(path.Child("parameter"), c.Parameter, slices.Sorted(maps.Keys(base.Params))))
	case c.Parameter != workloads.RateParameter && !swept:
		allowed := slices.Sorted(maps.Keys(base.Params))
		if knob {
			allowed = append(allowed, workloads.RateParameter)
		}
		errs = append(errs, field.NotSupported(path.Child("parameter"), c.Parameter, allowed))
	}
	if cf := c.Confirm; cf != nil && cf.Duration != nil {
		if _, ok := w.(workloads.DurationKnob); !ok {
			errs = append(errs, field.Invalid(path.Child("confirm", "duration"), cf.Duration.Duration.String(),
				fmt.Sprintf("%s measures each level for the workload's own duration: leave confirm.duration unset", w.Name())))
		} else if need := cf.Duration.Duration * time.Duration(2*(repetitions(run)+1)); need > timeout(run) {
			errs = append(errs, field.Invalid(path.Child("confirm", "duration"), cf.Duration.Duration.String(),
				fmt.Sprintf("two confirmations of %d measurements of it take up to %s, more than spec.timeout (%s): raise spec.timeout", repetitions(run)+1, need, timeout(run))))
		}
	}
	if sk := c.Soak; sk != nil {
		if _, ok := w.(workloads.DurationKnob); !ok {
			errs = append(errs, field.Invalid(path.Child("soak"), sk.Duration.Duration.String(),
				fmt.Sprintf("%s cannot be held for a duration of its own: a soak needs a tool that takes a duration per level", w.Name())))
		} else if need := 2 * sk.Duration.Duration; need > timeout(run) {
			errs = append(errs, field.Invalid(path.Child("soak", "duration"), sk.Duration.Duration.String(),
				fmt.Sprintf("the soak, measured again once when its first attempt fails, takes up to %s, more than spec.timeout (%s): raise spec.timeout", need, timeout(run))))
		}
	}
	if c.Parameter != workloads.RateParameter && c.Rules.MinAchievedPercent != nil {
		errs = append(errs, field.Invalid(path.Child("rules", "minAchievedPercent"), *c.Rules.MinAchievedPercent, "judges a rate level: parameter must be rate"))
	}
	if cc, ok := w.(workloads.CapacityChecker); ok {
		errs = append(errs, cc.CheckCapacity(&run.Spec.Workload, c, path)...)
	}
	return base, errs
}

// coordinatedOmission says how the run's latency at its levels is measured.
func coordinatedOmission(run *benchv1.BenchmarkRun, w workloads.Workload) string {
	if run.Spec.Capacity.Parameter != workloads.RateParameter {
		return "ClosedLoop"
	}
	if k, ok := w.(workloads.RateKnob); ok && k.RateCorrected(&run.Spec.Workload) {
		return "Corrected"
	}
	return "Uncorrected"
}

// uncorrectedWarning names the tool when a latency rule judges latency it
// measures at a fixed rate from when each request was sent: near the limit
// those figures flatter the server (coordinated omission).
func uncorrectedWarning(run *benchv1.BenchmarkRun, w workloads.Workload) string {
	if len(run.Spec.Capacity.Rules.Latency) == 0 || coordinatedOmission(run, w) != "Uncorrected" {
		return ""
	}
	return fmt.Sprintf("%s measures latency at a fixed rate from when each request was sent, not from its intended start: near the limit the latency rules judge flattering figures (coordinated omission); judge its levels on minAchievedPercent too", w.Name())
}

// judgedLevels are the levels the search decides from: every judged level
// of the search, and each failed confirmation as a failing level.
func judgedLevels(cs *benchv1.CapacityStatus) []capacity.Level {
	var out []capacity.Level
	for _, l := range cs.Levels {
		if l.Passed != nil && (!l.Confirm || !*l.Passed) {
			out = append(out, capacity.Level{Value: l.Value, Passed: *l.Passed})
		}
	}
	return out
}

// timeUp says the run's capacity time budget has passed since its first level started.
func timeUp(st *runState) bool {
	b := st.run.Spec.Capacity.TimeBudget
	if b == nil || len(st.run.Status.Steps) == 0 || len(st.run.Status.Steps[0].Repetitions) == 0 {
		return false
	}
	start := st.run.Status.Steps[0].Repetitions[0].StartTime
	return start != nil && st.now.Sub(start.Time) >= b.Duration
}

func allSucceeded(s benchv1.StepStatus) bool {
	for _, r := range s.Repetitions {
		if r.Verdict != benchv1.VerdictSucceeded {
			return false
		}
	}
	return true
}

func firstReason(rs []string) string {
	if len(rs) == 0 {
		return "no reason given"
	}
	return rs[0]
}

func roundPtr(v *float64) *float64 {
	if v == nil {
		return nil
	}
	x := status.Round(*v, 3)
	return &x
}

// generatorLimit is the pre-flight check of rate level next: why the load
// generators cannot offer it, or "". It reads the generators' CPU per
// operation at the largest level measured so far that recorded it, and the
// CPU each generator declares (its limit, else its request); without
// either there is nothing to check. It depends only on spec and status,
// so a reconcile run again decides the same.
func generatorLimit(run *benchv1.BenchmarkRun, cs *benchv1.CapacityStatus, next int32) string {
	if run.Spec.Capacity.Parameter != workloads.RateParameter {
		return ""
	}
	res := run.Spec.Workload.Resources
	cpu, which := res.Limits.Cpu(), "limits"
	if cpu.IsZero() {
		cpu, which = res.Requests.Cpu(), "requests"
	}
	if cpu.IsZero() {
		return ""
	}
	var from *benchv1.CapacityLevel
	for i := range cs.Levels {
		l := &cs.Levels[i]
		if l.LoadGeneratorCPUMicrosPerOperation != nil && *l.LoadGeneratorCPUMicrosPerOperation > 0 && (from == nil || l.Value > from.Value) {
			from = l
		}
	}
	if from == nil {
		return ""
	}
	maxPercent := specs.MaxLoadGeneratorCPUPercent(run)
	generators := max(run.Spec.Workload.Parallelism, 1)
	cost := *from.LoadGeneratorCPUMicrosPerOperation
	need, per := capacity.GeneratorsNeeded(next, cost, cpu.AsApproximateFloat64(), maxPercent)
	if need <= int(generators) {
		return ""
	}
	return fmt.Sprintf("the pre-flight check refused level %s=%d: it needs %d load generators — at %s the generators used %.4g µs of CPU an operation, and each may use %s CPU (spec.workload.resources.%s.cpu) up to %.4g %% (spec.validity.maxLoadGeneratorCPUPercent), %.0f operations a second; spec.workload.parallelism is %d: raise it to %d or give the generators more CPU",
		run.Spec.Capacity.Parameter, next, need, from.Step, cost, cpu.String(), which, maxPercent, per, generators, need)
}
