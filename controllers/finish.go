package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// finish records the environment, writes the final results document, and
// decides the run's verdict. endReason is empty when every measurement ran,
// or says why the run ended early (Timeout, PrepareFailed); what was
// measured until then is kept either way.
func (r *BenchmarkRunReconciler) finish(ctx context.Context, st *runState, endReason string) (ctrl.Result, error) {
	run := st.run
	// What status said of validity before this look.
	var awaited metav1.Condition
	if c := meta.FindStatusCondition(run.Status.Conditions, benchv1.ConditionValid); c != nil {
		awaited = *c
	}
	if endReason == "" {
		// A finish retried after a failed write keeps the reason the run ended early.
		if c := meta.FindStatusCondition(run.Status.Conditions, benchv1.ConditionCompleted); c != nil && c.Status == metav1.ConditionFalse && endedEarly(c.Reason) {
			endReason, st.endMessage = c.Reason, c.Message
		}
	}
	run.Status.Phase = benchv1.PhaseCollecting
	env, err := r.environment(ctx, st)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("while recording the environment: %w", err)
	}
	run.Status.Environment = env
	phase, validReason, validMsg := verdict(run)
	switch endReason {
	case "":
		setCondition(run, benchv1.ConditionCompleted, metav1.ConditionTrue, benchv1.ReasonAllMeasured, "every measurement finished: "+run.Status.Progress)
	case benchv1.ReasonTimeout:
		phase = benchv1.PhaseFailed
		setCondition(run, benchv1.ConditionCompleted, metav1.ConditionFalse, endReason,
			fmt.Sprintf("the run did not finish within its timeout of %s; %s measurements were kept", timeout(run), orDash(run.Status.Progress)))
	default:
		phase = benchv1.PhaseFailed
		msg := st.endMessage
		if msg == "" {
			msg = "the run ended early: " + endReason
		}
		setCondition(run, benchv1.ConditionCompleted, metav1.ConditionFalse, endReason, msg)
	}
	if validReason == benchv1.ReasonAwaitingResults && endReason != "" {
		validReason, validMsg = endReason, "nothing was measured"
	}
	valid := metav1.ConditionFalse
	if validReason == benchv1.ReasonAllValid {
		valid = metav1.ConditionTrue
	}
	setCondition(run, benchv1.ConditionValid, valid, validReason, validMsg)
	run.Status.Phase = phase
	// Past the timeout, or the collect deadline, a result that is gone for
	// good is reported, not waited for; before, the next reconcile looks again.
	loss := ""
	switch endReason {
	case benchv1.ReasonTimeout:
		loss = "the run's timeout passed"
	case "":
		limit := run.Spec.Deadlines.CollectDeadline()
		if passed, _ := st.phaseDeadline(collectWhat, st.phaseClock(collectWhat), limit); passed {
			loss = fmt.Sprintf("spec.deadlines.collect (%s) passed", limit)
		}
	}
	if err := r.writeDocument(ctx, st, loss); err != nil {
		// The deferred status patch still runs: the phase must not say the
		// run is over before its results document is complete (a conflict
		// on the ConfigMap is retried by the next reconcile).
		run.Status.Phase = benchv1.PhaseCollecting
		// Nothing is judged until the document is written: validity stays
		// what status said.
		valid := meta.FindStatusCondition(run.Status.Conditions, benchv1.ConditionValid)
		if awaited.Type != "" {
			*valid = awaited
		}
		var missing missingResultsError
		if !errors.As(err, &missing) {
			return ctrl.Result{}, err
		}
		// Not a reconcile error: its backoff doubles at each look, so a
		// run looked at every few seconds at first would be looked at
		// again minutes past its timeout. It looks again every minute, and
		// at the timeout (withDeadline), when the loss is reported. Status
		// says what it waits for (Valid=False, AwaitingResults), and the
		// event is said when that changes, not at every look nor after a
		// restart: the recorder's spam filter counts a run's events of
		// every reason together, and would drop the run's final event.
		setCondition(run, benchv1.ConditionValid, metav1.ConditionFalse, benchv1.ReasonAwaitingResults, err.Error())
		if valid.Reason != awaited.Reason || valid.Message != awaited.Message {
			r.Recorder.Eventf(run, corev1.EventTypeWarning, "ResultsMissing", "%v", err)
		}
		return ctrl.Result{RequeueAfter: missingRetry}, nil
	}
	now := metav1.NewTime(st.now)
	run.Status.CompletionTime = &now
	return ctrl.Result{}, nil
}

// collectWhat is what the collect deadline is for.
const collectWhat = "the results of every measurement"

// endedEarly says whether a Completed reason is one of a run that ended
// before every measurement ran.
func endedEarly(reason string) bool {
	switch reason {
	case benchv1.ReasonTimeout, benchv1.ReasonPrepareFailed, benchv1.ReasonPodNotStarted, benchv1.ReasonDeadlineExceeded:
		return true
	}
	return false
}

// verdict decides the phase from the recorded measurements: any failed one
// fails the run; any invalid one, or an unstable step, makes it Invalid.
func verdict(run *benchv1.BenchmarkRun) (benchv1.Phase, string, string) {
	var failed, invalid, unstable []string
	n := 0
	for _, s := range run.Status.Steps {
		for _, rep := range s.Repetitions {
			n++
			what := fmt.Sprintf("%s #%d: %s", s.Name, rep.Index, strings.Join(rep.Reasons, "; "))
			switch rep.Verdict {
			case benchv1.VerdictFailed:
				failed = append(failed, what)
			case benchv1.VerdictInvalid:
				invalid = append(invalid, what)
			}
		}
		if s.Unstable {
			unstable = append(unstable, s.Name)
		}
	}
	switch {
	case n == 0:
		return benchv1.PhaseFailed, benchv1.ReasonAwaitingResults, "no measurement was recorded"
	case len(failed) > 0:
		return benchv1.PhaseFailed, benchv1.ReasonSomeFailed, fmt.Sprintf("%d of %d measurements failed: %s", len(failed), n, strings.Join(failed, " | "))
	case len(invalid) > 0:
		return benchv1.PhaseInvalid, benchv1.ReasonSomeInvalid, fmt.Sprintf("%d of %d measurements are not valid: %s", len(invalid), n, strings.Join(invalid, " | "))
	case len(unstable) > 0:
		return benchv1.PhaseInvalid, benchv1.ReasonUnstable, fmt.Sprintf("the primary metric varied more than %g%% between repetitions at %s",
			run.Spec.Validity.MaxCoefficientOfVariationPercent, strings.Join(unstable, ", "))
	}
	return benchv1.PhaseSucceeded, benchv1.ReasonAllValid, fmt.Sprintf("all %d measurements passed the validity checks", n)
}

// writeDocument replaces the per-measurement entries of the results
// ConfigMap with the final document. It is idempotent: a finish that runs
// again (its status patch lost to a conflict, or the manager restarted in
// between) finds the results in the document it wrote before, and adds any
// measurement stored since. It refuses to write a document that lacks a
// result status says was measured (a missingResults error), unless
// acceptLoss, when the document and the Valid condition name what was lost.
func (r *BenchmarkRunReconciler) writeDocument(ctx context.Context, st *runState, loss string) error {
	acceptLoss := loss != ""
	run := st.run
	var dropped, missing []string
	err := r.updateResults(ctx, st, func(cm *corev1.ConfigMap) error {
		// The measurements come from the version being replaced: one stored
		// an instant ago cannot be missed by a stale read (the update would
		// be refused).
		stored, err := unpackMeasurements(cm)
		if err != nil {
			return err
		}
		previous, err := specs.ReadDocument(cm)
		if err != nil {
			return err
		}
		var doc *specs.Document
		doc, missing = buildDocument(run, stored, previous)
		if len(missing) > 0 {
			if !acceptLoss {
				// Written back unchanged: the update is refused if this
				// version was a stale read (a result stored since is then
				// found by the next reconcile), and goes through, proving
				// the loss, if it was current.
				return nil
			}
			run.Status.Phase = benchv1.PhaseFailed
			setCondition(run, benchv1.ConditionValid, metav1.ConditionFalse, benchv1.ReasonResultsLost,
				"the results ConfigMap lost the results of "+strings.Join(missing, ", ")+" ("+loss+")")
			doc.Phase, doc.Lost = run.Status.Phase, missing
		}
		for _, c := range run.Status.Conditions {
			doc.Conditions = append(doc.Conditions, specs.DocumentCondition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
		}
		final, err := specs.ResultsConfigMap(run, doc)
		if err != nil {
			return err
		}
		dropped = doc.Dropped
		cm.Data, cm.BinaryData = final.Data, final.BinaryData
		return nil
	})
	if err != nil {
		return err
	}
	if len(missing) > 0 && !acceptLoss {
		return missingResults(missing)
	}
	if len(dropped) > 0 {
		r.Recorder.Eventf(run, corev1.EventTypeWarning, "ResultsReduced", "The results ConfigMap left out %s to stay under 1 MiB", strings.Join(dropped, ", "))
	}
	return nil
}

// buildDocument assembles the final document from the measurements stored
// one by one and, for those already folded into it, the document a previous
// finish wrote. It lists the measurements status records that neither has.
func buildDocument(run *benchv1.BenchmarkRun, stored map[string]*results.Result, previous *specs.Document) (*specs.Document, []string) {
	doc := &specs.Document{
		APIVersion: benchv1.GroupVersion.String(), Kind: "BenchmarkRunResults",
		Run: run.Name, Namespace: run.Namespace, UID: string(run.UID), Workload: run.Status.Workload,
		Target: run.Status.Target, Phase: run.Status.Phase, Primary: run.Status.Primary,
		Environment: run.Status.Environment, Spec: run.Spec, Prepare: stored[specs.PrepareKey],
	}
	if previous != nil {
		if doc.Prepare == nil {
			doc.Prepare = previous.Prepare
		}
		// What a previous write had to leave out stays left out of the
		// results it kept, so the document keeps saying so.
		doc.Dropped = append(doc.Dropped, previous.Dropped...)
	}
	var missing []string
	for i, s := range run.Status.Steps {
		ds := specs.DocumentStep{Name: s.Name, Parameters: s.Parameters, Summary: s.Summary, Unstable: s.Unstable}
		for _, rep := range s.Repetitions {
			res := stored[specs.MeasurementKey(i, rep.Index)]
			if res == nil {
				res = previous.Result(s.Name, rep.Index)
			}
			if res == nil {
				missing = append(missing, fmt.Sprintf("%s #%d", s.Name, rep.Index))
			}
			ds.Repetitions = append(ds.Repetitions, specs.DocumentRepetition{Index: rep.Index, Job: rep.Job, Node: rep.Node, Result: res})
		}
		doc.Steps = append(doc.Steps, ds)
	}
	return doc, missing
}

// missingRetry is how often a run whose results document lacks a result
// looks again before its timeout (a stale read of the ConfigMap is refused
// by its update, so the first look that goes through proves the loss).
const missingRetry = time.Minute

// missingResultsError says which measurements status records but the
// results ConfigMap does not hold.
type missingResultsError []string

func missingResults(m []string) error { return missingResultsError(m) }

func (e missingResultsError) Error() string {
	return "the results ConfigMap holds no result for " + strings.Join(e, ", ") + ", which status records as measured"
}
