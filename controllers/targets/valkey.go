package targets

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Valkey is a one-pod Valkey StatefulSet and its Service, owned by the run.
type Valkey struct{}

func (Valkey) Ensure(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun) (Observed, error) {
	name := specs.ValkeyName(run)
	host := fmt.Sprintf("%s.%s.svc", name, run.Namespace)
	o := Observed{
		Status:      benchv1.TargetStatus{Kind: "valkey", Resource: "StatefulSet/" + name, Host: host, Port: specs.ValkeyPort},
		Endpoint:    workloads.Endpoint{Host: host, Port: specs.ValkeyPort},
		PodSelector: specs.ValkeyPodLabels(run),
		Image:       specs.ValkeyImage(run),
	}
	if err := createIfMissing(ctx, c, specs.ValkeyService(run)); err != nil {
		return o, fmt.Errorf("while creating the valkey service: %w", err)
	}
	if err := createIfMissing(ctx, c, specs.ValkeyStatefulSet(run)); err != nil {
		return o, fmt.Errorf("while creating the valkey statefulset: %w", err)
	}
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, &sts); err != nil {
		return o, err
	}
	if sts.Status.ReadyReplicas < 1 {
		return notReady(o, benchv1.ReasonProvisioning, fmt.Sprintf("waiting for StatefulSet %s to have a ready pod", name)), nil
	}
	o.Ready, o.Reason, o.Message = true, benchv1.ReasonReady, "valkey is ready"
	return o, nil
}

func (Valkey) Cleanup(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun) error {
	name := specs.ValkeyName(run)
	meta := specs.ObjectMeta(run, name, specs.RoleTarget)
	if err := deleteIfExists(ctx, c, &appsv1.StatefulSet{ObjectMeta: meta}); err != nil {
		return err
	}
	return deleteIfExists(ctx, c, &corev1.Service{ObjectMeta: meta})
}
