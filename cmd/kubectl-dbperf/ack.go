package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// cmdAck records a person's acknowledgement of a schedule's open regression
// (or improvement) in its annotation bench.dbperf.io/acknowledgements: the
// schedule closes it (Regressed=False, Acknowledged) and judges later runs
// against the new level. --undo removes the newest acknowledgement (or the
// one made at --run), and the change opens again if the runs still show it.
func cmdAck(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("ack", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o common
	o.bind(fs, "table")
	run := fs.String("run", "", "the run where the accepted level starts (default: the first run of the open change); with --undo, the run the acknowledgement was made at")
	reason := fs.String("reason", "", "why the new level is expected (required)")
	undo := fs.Bool("undo", false, "remove the newest acknowledgement (or the one made at --run) instead")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"ack needs exactly one SCHEDULE name"}
	}
	if !*undo && *reason == "" {
		return usageError{"ack: --reason is required: say why the new level is expected"}
	}
	k, err := connect(o)
	if err != nil {
		return err
	}
	by := k.whoAmI(ctx)
	var what string
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &benchv1.BenchmarkSchedule{}
		if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.namespace, Name: pos[0]}, s); err != nil {
			return fmt.Errorf("BenchmarkSchedule %s/%s: %w", k.namespace, pos[0], err)
		}
		acks, err := benchv1.Acknowledgements(s.Annotations)
		if err != nil && !*undo {
			return fmt.Errorf("schedule %s: %w; fix or remove the annotation first", s.Name, err)
		}
		if *undo {
			acks, what, err = undoAck(s, acks, *run)
		} else {
			var a benchv1.Acknowledgement
			a, err = newAck(s, *run, *reason, by)
			acks, what = append(acks, a), "schedule "+s.Name+": "+a.String()
		}
		if err != nil {
			return err
		}
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		if len(acks) == 0 {
			delete(s.Annotations, benchv1.AnnotationAcknowledgements)
		} else {
			raw, err := json.Marshal(acks)
			if err != nil {
				return err
			}
			s.Annotations[benchv1.AnnotationAcknowledgements] = string(raw)
		}
		return k.c.Update(ctx, s)
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, what)
	return nil
}

// newAck makes the acknowledgement of the change open now: it takes effect
// after the change's newest run, and accepts its level from --run (one of
// its runs) or from its first run.
func newAck(s *benchv1.BenchmarkSchedule, from, reason, by string) (benchv1.Acknowledgement, error) {
	if s.Spec.Regression == nil {
		return benchv1.Acknowledgement{}, fmt.Errorf("schedule %s has no spec.regression: nothing is judged, nothing to acknowledge", s.Name)
	}
	if s.Status.Regression == nil || s.Status.Regression.Open == nil {
		return benchv1.Acknowledgement{}, fmt.Errorf("schedule %s has no open regression or improvement to acknowledge%s", s.Name, conditionNote(s))
	}
	open := s.Status.Regression.Open
	if from != "" {
		var runs []string
		for _, v := range open.Values {
			runs = append(runs, v.Run)
		}
		if !slices.Contains(runs, from) {
			return benchv1.Acknowledgement{}, fmt.Errorf("run %s is not a run of the open %s (from run %s; its newest runs: %v)",
				from, strings.ToLower(string(open.Kind)), open.FirstRun, runs)
		}
	}
	return benchv1.Acknowledgement{Run: open.LatestRun, From: from, Reason: reason, By: by,
		At: metav1.NewTime(time.Now().UTC().Truncate(time.Second))}, nil
}

// undoAck removes the newest acknowledgement, or the one made at run; one
// whose run has left the history (historyLimit) is carried in status and
// cannot be undone.
func undoAck(s *benchv1.BenchmarkSchedule, acks []benchv1.Acknowledgement, run string) ([]benchv1.Acknowledgement, string, error) {
	idx := -1
	for i, a := range acks {
		if (run == "" || a.Run == run) && (idx < 0 || !a.At.Before(&acks[idx].At)) {
			idx = i
		}
	}
	if idx < 0 {
		if run != "" {
			return nil, "", fmt.Errorf("schedule %s has no acknowledgement made at run %s", s.Name, run)
		}
		return nil, "", fmt.Errorf("schedule %s has no acknowledgement to undo", s.Name)
	}
	a := acks[idx]
	inHistory := false
	for _, h := range s.Status.History {
		inHistory = inHistory || h.Run == a.Run
	}
	if !inHistory {
		return nil, "", fmt.Errorf("the acknowledgement at run %s cannot be undone: the run has left the history (spec.historyLimit) and its level is carried in status.regression.carried", a.Run)
	}
	return slices.Delete(slices.Clone(acks), idx, idx+1), fmt.Sprintf("schedule %s: undid %s", s.Name, a), nil
}

func conditionNote(s *benchv1.BenchmarkSchedule) string {
	for _, c := range s.Status.Conditions {
		if c.Type == benchv1.ConditionRegressed {
			return fmt.Sprintf(" (Regressed=%s, %s: %s)", c.Status, c.Reason, c.Message)
		}
	}
	return ""
}
