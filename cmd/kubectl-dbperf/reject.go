package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authnv1 "k8s.io/api/authentication/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// cmdReject records a person's rejection of a run's measurements (or undoes
// it) in the run's annotation bench.dbperf.io/rejections; the operator
// turns it into the run's condition Rejected, and comparisons and schedule
// histories leave the measurements out.
func cmdReject(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("reject", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o common
	o.bind(fs, "table")
	step := fs.String("step", "", "the step's name (default: every step)")
	rep := fs.Int("repetition", 0, "the repetition, from 1 (default: every repetition)")
	reason := fs.String("reason", "", "why the measurements cannot be trusted (required)")
	undo := fs.Bool("undo", false, "remove the rejection of the same step and repetition instead")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"reject needs exactly one RUN name"}
	}
	if *rep < 0 {
		return usageError{fmt.Sprintf("reject: --repetition %d: count from 1 (0 or unset: every repetition)", *rep)}
	}
	if !*undo && *reason == "" {
		return usageError{"reject: --reason is required: say why the measurements cannot be trusted"}
	}
	k, err := connect(o)
	if err != nil {
		return err
	}
	rj := benchv1.Rejection{Step: *step, Repetition: int32(*rep), Reason: *reason, By: k.whoAmI(ctx), At: metav1.NewTime(time.Now().UTC().Truncate(time.Second))}
	var what string
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		run, err := k.run(ctx, pos[0])
		if err != nil {
			return err
		}
		if err := checkScope(run, rj); err != nil {
			return err
		}
		rs, err := benchv1.Rejections(run.Annotations)
		if err != nil && !*undo {
			return fmt.Errorf("run %s: %w; fix or remove the annotation first", run.Name, err)
		}
		same := func(x benchv1.Rejection) bool { return x.Step == rj.Step && x.Repetition == rj.Repetition }
		if *undo {
			n := len(rs)
			rs = slices.DeleteFunc(rs, same)
			if n == len(rs) && err == nil {
				return fmt.Errorf("run %s has no rejection of %s to undo", run.Name, rj.What())
			}
			what = fmt.Sprintf("undid the rejection of %s of run %s", rj.What(), run.Name)
		} else {
			rs = append(slices.DeleteFunc(rs, same), rj)
			what = fmt.Sprintf("run %s: %s", run.Name, rj)
		}
		if run.Annotations == nil {
			run.Annotations = map[string]string{}
		}
		if len(rs) == 0 {
			delete(run.Annotations, benchv1.AnnotationRejections)
		} else {
			raw, err := json.Marshal(rs)
			if err != nil {
				return err
			}
			run.Annotations[benchv1.AnnotationRejections] = string(raw)
		}
		return k.c.Update(ctx, run)
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, what)
	return nil
}

// checkScope refuses a step or repetition the run does not have.
func checkScope(run *benchv1.BenchmarkRun, rj benchv1.Rejection) error {
	if rj.Step == "" && rj.Repetition == 0 {
		return nil
	}
	var steps []string
	for _, st := range run.Status.Steps {
		steps = append(steps, st.Name)
		if rj.Step != "" && st.Name != rj.Step {
			continue
		}
		if rj.Repetition == 0 {
			return nil
		}
		for _, r := range st.Repetitions {
			if r.Index == rj.Repetition {
				return nil
			}
		}
	}
	if rj.Step != "" && !slices.Contains(steps, rj.Step) {
		return fmt.Errorf("run %s has no step %q (its steps: %v)", run.Name, rj.Step, steps)
	}
	return fmt.Errorf("run %s has no measurement of repetition %d%s", run.Name, rj.Repetition, map[bool]string{true: " in step " + rj.Step, false: ""}[rj.Step != ""])
}

// whoAmI is the user the API server authenticates the plugin as (a
// SelfSubjectReview), "" when it cannot say.
func (k *cluster) whoAmI(ctx context.Context) string {
	review := &authnv1.SelfSubjectReview{}
	if err := k.c.Create(ctx, review, &client.CreateOptions{}); err != nil {
		return ""
	}
	return review.Status.UserInfo.Username
}
