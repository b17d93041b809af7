package targets

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Observed is what a provisioner saw of its target.
type Observed struct {
	Ready bool
	// Reason and Message explain a target that is not ready, as the
	// TargetReady condition shows them.
	Reason  string
	Message string
	// Endpoint is how load generators connect; valid when Ready.
	Endpoint workloads.Endpoint
	Status   benchv1.TargetStatus
	// PodSelector selects the target's pods (nil for external targets):
	// load generators avoid their nodes, and the environment records them.
	PodSelector map[string]string
	Image       string
}

// Provisioner manages one kind of target.
type Provisioner interface {
	// Ensure creates what is missing and reports readiness. A target that
	// cannot become ready for a reason the user must fix is reported in
	// Observed, not as an error; errors are for retrying.
	Ensure(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun) (Observed, error)
	// Cleanup deletes what Ensure created; it is safe to call again.
	Cleanup(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun) error
}

// For returns the provisioner of the run's target kind.
func For(run *benchv1.BenchmarkRun) (Provisioner, error) {
	t := run.Spec.Target
	switch {
	case t.Postgres != nil:
		return Postgres{}, nil
	case t.Valkey != nil:
		return ServerKind{Kind: "valkey"}, nil
	case t.MySQL != nil:
		return ServerKind{Kind: "mysql"}, nil
	case t.MongoDB != nil:
		return ServerKind{Kind: "mongodb"}, nil
	case t.OpenSearch != nil:
		return ServerKind{Kind: "opensearch"}, nil
	case t.External != nil:
		return External{}, nil
	}
	return nil, fmt.Errorf("spec.target: exactly one of postgres, valkey, mysql, mongodb, opensearch or external must be set")
}

// Kind names the run's target kind.
func Kind(run *benchv1.BenchmarkRun) string {
	t := run.Spec.Target
	switch {
	case t.Postgres != nil:
		return "postgres"
	case t.Valkey != nil:
		return "valkey"
	case t.MySQL != nil:
		return "mysql"
	case t.MongoDB != nil:
		return "mongodb"
	case t.OpenSearch != nil:
		return "opensearch"
	case t.External != nil:
		return "external"
	}
	return ""
}

// notReady reports a target that is not ready, and why.
func notReady(o Observed, reason, msg string) Observed {
	o.Ready, o.Reason, o.Message = false, reason, msg
	return o
}

// createIfMissing creates obj unless it exists; an existing object is left
// as it is, since a run's children never change after they are made.
func createIfMissing(ctx context.Context, c client.Client, obj client.Object) error {
	probe := &metav1.PartialObjectMetadata{}
	probe.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	if probe.GroupVersionKind().Empty() {
		gvk, err := c.GroupVersionKindFor(obj)
		if err != nil {
			return err
		}
		probe.SetGroupVersionKind(gvk)
	}
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), probe)
	if !apierrors.IsNotFound(err) {
		return err
	}
	if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func deleteIfExists(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Delete(ctx, obj, client.PropagationPolicy("Background"))
	return client.IgnoreNotFound(err)
}
