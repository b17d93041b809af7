package targets

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/certs"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// ClickHouse is a shard of ClickHouse servers from the official image: the
// lead (the one server, or the replica the client Service points at), the
// other replicas, and the Keeper ensemble they replicate through. It is
// ready when every pod of every StatefulSet is; clients get the lead's HTTP
// interface, the database and the generated user.
type ClickHouse struct{}

func (ClickHouse) Kind() string { return specs.ClickHouseKind }

// Ensure creates what is missing, in the order the servers need it: the
// credentials and configuration they read, the Services that name the
// pods, then the StatefulSets. Needs changes nothing: the generated user is
// the one account.
func (k ClickHouse) Ensure(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, _ Needs) (Observed, error) {
	ch := specs.ClickHouseTargetFor(run)
	lead := ch.Lead
	secret := corev1.LocalObjectReference{Name: specs.CredentialsSecretName(run, k.Kind())}
	o := Observed{
		Status: benchv1.TargetStatus{Kind: k.Kind(), Resource: "StatefulSet/" + lead.Name, Host: lead.Host(), Port: lead.Port},
		Endpoint: pod.Endpoint{Host: lead.Host(), Port: lead.Port, Database: run.Spec.Target.ClickHouse.Database,
			Username: &corev1.SecretKeySelector{LocalObjectReference: secret, Key: "username"},
			Password: &corev1.SecretKeySelector{LocalObjectReference: secret, Key: "password"}},
		PodSelector:     specs.ServerPodLabels(run),
		PrimarySelector: lead.Selector(),
		Image:           lead.Image,
	}
	if o.Endpoint.Database == "" {
		o.Endpoint.Database = "bench"
	}
	// The API server refuses it; a spec that got past it creates nothing.
	if t := run.Spec.Target.ClickHouse; t.Replicas > 1 && t.Keeper == nil {
		return notReady(o, benchv1.ReasonInvalidSpec, "spec.target.clickhouse.keeper: keeper is required with replicas above 1: the replicas replicate through ClickHouse Keeper"), nil
	}
	err := ensureSecret(ctx, c, run, secret.Name, func() (map[string][]byte, error) {
		return map[string][]byte{"username": []byte(lead.User), "password": []byte(certs.Password(24))}, nil
	})
	if err != nil {
		return o, fmt.Errorf("while creating the clickhouse credentials: %w", err)
	}
	if err := createIfMissing(ctx, c, ch.ConfigMap()); err != nil {
		return o, fmt.Errorf("while creating the clickhouse configuration: %w", err)
	}
	for _, svc := range ch.Services() {
		if err := createIfMissing(ctx, c, svc); err != nil {
			return o, fmt.Errorf("while creating the clickhouse service %s: %w", svc.Name, err)
		}
	}
	sets := ch.StatefulSets()
	for _, sts := range sets {
		if err := createIfMissing(ctx, c, sts); err != nil {
			return o, fmt.Errorf("while creating the clickhouse statefulset %s: %w", sts.Name, err)
		}
	}
	var waiting []string
	ready, want := int32(0), int32(0)
	for _, desired := range sets {
		var sts appsv1.StatefulSet
		// Just created, it may not be in the cache yet: none of its pods is ready.
		if err := c.Get(ctx, client.ObjectKeyFromObject(desired), &sts); client.IgnoreNotFound(err) != nil {
			return o, err
		}
		n := *desired.Spec.Replicas
		ready, want = ready+min(sts.Status.ReadyReplicas, n), want+n
		if sts.Status.ReadyReplicas < n {
			waiting = append(waiting, fmt.Sprintf("%s %d/%d", sts.Name, sts.Status.ReadyReplicas, n))
		}
	}
	if len(waiting) > 0 {
		return notReady(o, benchv1.ReasonProvisioning, "waiting for StatefulSets (pods ready): "+strings.Join(waiting, ", ")), nil
	}
	o.Ready, o.Reason, o.Message = true, benchv1.ReasonReady, fmt.Sprintf("clickhouse is ready (%d/%d pods)", ready, want)
	return o, nil
}

// Cleanup deletes the StatefulSets, the Services and the configuration.
// The generated Secret goes with the run (owner reference), as for every
// server kind.
func (ClickHouse) Cleanup(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun) error {
	ch := specs.ClickHouseTargetFor(run)
	var objs []client.Object
	for _, sts := range ch.StatefulSets() {
		objs = append(objs, sts)
	}
	for _, svc := range ch.Services() {
		objs = append(objs, svc)
	}
	objs = append(objs, ch.ConfigMap())
	for _, obj := range objs {
		if err := deleteIfExists(ctx, c, obj); err != nil {
			return fmt.Errorf("while deleting %s: %w", obj.GetName(), err)
		}
	}
	return nil
}
