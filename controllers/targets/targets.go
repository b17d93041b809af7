package targets

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
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
	Endpoint pod.Endpoint
	Status   benchv1.TargetStatus
	// PodSelector selects the target's pods (nil for external targets):
	// load generators avoid their nodes, and the environment records them.
	PodSelector map[string]string
	// PrimarySelector selects the pod of the target's primary (the one
	// server of an unreplicated target); nil when it has no single
	// primary (a sharded cluster, an external endpoint).
	PrimarySelector map[string]string
	// RoleLabels are pod labels, besides the operator's own
	// (benchv1.LabelInstanceRole), whose value is the pod's InstanceRole
	// (CloudNativePG's instance role: primary or replica).
	RoleLabels []string
	// Volumes are the target's volumes, as status.environment records them.
	Volumes []benchv1.VolumeInfo
	Image   string
}

// Provisioner manages one kind of target.
type Provisioner interface {
	// Kind names the kind as spec.target spells it.
	Kind() string
	// Ensure creates what is missing and reports readiness. A target that
	// cannot become ready for a reason the user must fix is reported in
	// Observed, not as an error; errors are for retrying.
	Ensure(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, needs Needs) (Observed, error)
	// Cleanup deletes what Ensure created; it is safe to call again.
	Cleanup(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun) error
}

// Needs is what the run's workload asks of its target beyond a client's
// credentials. The controller computes it once from the workload
// (NeedsOf), so that no target code asks which tool is running.
type Needs struct {
	// Administrator: the workload creates its own databases and roles and
	// needs the target's administrator account (Endpoint.Superuser).
	Administrator bool
}

// NeedsOf asks a workload what it needs of its target: nothing more than a
// client's credentials unless it implements workloads.TargetNeeds.
func NeedsOf(w workloads.Workload, spec *benchv1.WorkloadSpec) Needs {
	tn, ok := w.(workloads.TargetNeeds)
	if !ok {
		return Needs{}
	}
	return Needs{Administrator: tn.NeedsAdministrator(spec)}
}

// refusalAsCondition reports a child the API server refused as invalid (a
// placement's toleration or affinity, anything the schema lets through and
// Kubernetes does not) as a target that cannot become ready, reason
// InvalidSpec with the API server's words, and not as an error: retrying
// cannot make the child valid, and the run would retry until its timeout.
type refusalAsCondition struct{ Provisioner }

func (p refusalAsCondition) Ensure(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, needs Needs) (Observed, error) {
	o, err := p.Provisioner.Ensure(ctx, c, run, needs)
	if err != nil && apierrors.IsInvalid(err) {
		return notReady(o, benchv1.ReasonInvalidSpec, "the API server refused the target: "+err.Error()), nil
	}
	return o, err
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

// sessionStrings are session variables as the endpoint carries them.
func sessionStrings(vars map[string]benchv1.SessionValue) map[string]string {
	if len(vars) == 0 {
		return nil
	}
	out := make(map[string]string, len(vars))
	for k, v := range vars {
		out[k] = string(v)
	}
	return out
}

// Switcher is a target kind that can switch its primary over to a standby
// on request (a memberLoss disturbance with action Switchover).
type Switcher interface {
	// Switchover asks for a standby to replace primary, the pod now
	// primary; it is safe to call again.
	Switchover(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, primary string) error
}
