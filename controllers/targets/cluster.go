package targets

import (
	"context"
	"fmt"
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// joined creates the Job that joins a cluster's servers (once, when every
// pod is ready) and reports the target ready when it succeeded. A failed
// Job leaves the target not ready with what the Job and its last pod said;
// the run's timeout then ends the run, as for any target that never
// becomes ready.
func joined(ctx context.Context, c client.Client, job *batchv1.Job, o Observed) (Observed, error) {
	if err := createIfMissing(ctx, c, job); err != nil {
		return o, fmt.Errorf("while creating the cluster's Job: %w", err)
	}
	var got batchv1.Job
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), &got); err != nil {
		if apierrors.IsNotFound(err) { // created an instant ago, not in the cache yet
			return notReady(o, benchv1.ReasonProvisioning, fmt.Sprintf("waiting for Job %s to appear", job.Name)), nil
		}
		return o, err
	}
	for _, cond := range got.Status.Conditions {
		if cond.Status != corev1.ConditionTrue {
			continue
		}
		switch cond.Type {
		case batchv1.JobComplete:
			o.Ready, o.Reason, o.Message = true, benchv1.ReasonReady, fmt.Sprintf("the cluster is created (Job %s)", job.Name)
			return o, nil
		case batchv1.JobFailed:
			msg := fmt.Sprintf("Job %s could not create the cluster: %s: %s", job.Name, cond.Reason, cond.Message)
			if last, err := lastTermination(ctx, c, &got); err != nil {
				return o, err
			} else if last != "" {
				msg += "; its last pod said: " + last
			}
			return notReady(o, benchv1.ReasonClusterNotCreated, msg), nil
		}
	}
	return notReady(o, benchv1.ReasonProvisioning, fmt.Sprintf("waiting for Job %s to create the cluster", job.Name)), nil
}

// lastTermination is the termination message (the end of its log) of the
// Job's most recent failed pod.
func lastTermination(ctx context.Context, c client.Client, job *batchv1.Job) (string, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels(job.Spec.Template.Labels)); err != nil {
		return "", err
	}
	sort.Slice(pods.Items, func(i, j int) bool {
		return pods.Items[i].CreationTimestamp.Before(&pods.Items[j].CreationTimestamp)
	})
	msg := ""
	for _, p := range pods.Items {
		for _, s := range p.Status.ContainerStatuses {
			if t := s.State.Terminated; t != nil && t.ExitCode != 0 && t.Message != "" {
				msg = t.Message
			}
		}
	}
	return msg, nil
}
