package targets

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// Postgres is a CloudNativePG Cluster owned by the run. It is ready when
// CloudNativePG reports it healthy with every instance ready; load generators
// use the <cluster>-rw Service and the <cluster>-app Secret.
type Postgres struct{}

func (Postgres) Kind() string { return "postgres" }

// Ensure enables the postgres superuser, and hands its Secret to load
// generators, only for workloads that need an administrator.
func (p Postgres) Ensure(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, needs Needs) (Observed, error) {
	name := specs.PostgresClusterName(run)
	host := fmt.Sprintf("%s.%s.svc", specs.CNPGRWService(name), run.Namespace)
	secret := corev1.LocalObjectReference{Name: specs.CNPGAppSecret(name)}
	o := Observed{
		Status: benchv1.TargetStatus{Kind: p.Kind(), Resource: "Cluster/" + name, Host: host, Port: specs.CNPGPort},
		Endpoint: pod.Endpoint{
			Host: host, Port: specs.CNPGPort, Database: specs.CNPGDatabase,
			Username: &corev1.SecretKeySelector{LocalObjectReference: secret, Key: "username"},
			Password: &corev1.SecretKeySelector{LocalObjectReference: secret, Key: "password"},
		},
		PodSelector:     specs.CNPGInstancePods(name),
		PrimarySelector: map[string]string{specs.CNPGClusterLabel: name, specs.CNPGInstanceRoleLabel: "primary"},
		RoleLabels:      []string{specs.CNPGInstanceRoleLabel},
		Volumes:         specs.PostgresVolumes(run.Spec.Target.Postgres),
		Image:           run.Spec.Target.Postgres.ImageName,
	}
	if needs.Administrator {
		su := corev1.LocalObjectReference{Name: specs.CNPGSuperuserSecret(name)}
		o.Endpoint.Superuser = &corev1.SecretKeySelector{LocalObjectReference: su, Key: "username"}
		o.Endpoint.SuperuserPassword = &corev1.SecretKeySelector{LocalObjectReference: su, Key: "password"}
	}
	desired, err := specs.CNPGCluster(run, needs.Administrator)
	if err != nil {
		return o, fmt.Errorf("while building the CloudNativePG cluster: %w", err)
	}
	if err := createIfMissing(ctx, c, desired); err != nil {
		if meta.IsNoMatchError(err) {
			return notReady(o, benchv1.ReasonCRDNotInstalled,
				"the CloudNativePG Cluster CRD (postgresql.cnpg.io/v1) is not installed in this cluster: install CloudNativePG to use spec.target.postgres"), nil
		}
		return o, fmt.Errorf("while creating the CloudNativePG cluster: %w", err)
	}
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(specs.CNPGClusterGVK)
	if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cluster); err != nil {
		if apierrors.IsNotFound(err) { // created an instant ago, not in the cache yet
			return notReady(o, benchv1.ReasonProvisioning, fmt.Sprintf("waiting for the CloudNativePG cluster %s to appear", name)), nil
		}
		return o, err
	}
	phase, _, _ := unstructured.NestedString(cluster.Object, "status", "phase")
	ready, _, _ := unstructured.NestedInt64(cluster.Object, "status", "readyInstances")
	want, _, _ := unstructured.NestedInt64(cluster.Object, "spec", "instances")
	if img, _, _ := unstructured.NestedString(cluster.Object, "status", "image"); img != "" {
		o.Image = img
	}
	current, _, _ := unstructured.NestedString(cluster.Object, "status", "currentPrimary")
	if target, _, _ := unstructured.NestedString(cluster.Object, "status", "targetPrimary"); target != "" && current != "" && target != current {
		return notReady(o, benchv1.ReasonSwitchingOver, fmt.Sprintf("CloudNativePG is switching the primary over from %s to %s (%s)", current, target, phase)), nil
	}
	if phase != specs.CNPGHealthyPhase || ready < want {
		if phase == "" {
			phase = "no phase reported yet"
		}
		return notReady(o, benchv1.ReasonProvisioning,
			fmt.Sprintf("waiting for CloudNativePG cluster %s: %s, %d/%d instances ready", name, phase, ready, want)), nil
	}
	o, placed, err := placeCNPGRoles(ctx, c, run, cluster, o)
	if err != nil || !placed {
		return o, err
	}
	o.Ready, o.Reason, o.Message = true, benchv1.ReasonReady, fmt.Sprintf("CloudNativePG cluster %s is healthy", name)
	return o, nil
}

func (Postgres) Cleanup(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(specs.CNPGClusterGVK)
	u.SetNamespace(run.Namespace)
	u.SetName(specs.PostgresClusterName(run))
	err := deleteIfExists(ctx, c, u)
	if meta.IsNoMatchError(err) {
		return nil
	}
	return err
}

// OwnedKinds: the run owns a CloudNativePG Cluster (targets.ForeignOwner).
func (Postgres) OwnedKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{specs.CNPGClusterGVK}
}

// Switchover asks CloudNativePG to promote the first standby (by name)
// that is not primary, as `kubectl cnpg promote` does; nothing when a
// switchover away from primary was already asked for.
func (Postgres) Switchover(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, primary string) error {
	name := specs.PostgresClusterName(run)
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(specs.CNPGClusterGVK)
	if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cluster); err != nil {
		return err
	}
	current, _, _ := unstructured.NestedString(cluster.Object, "status", "currentPrimary")
	target, _, _ := unstructured.NestedString(cluster.Object, "status", "targetPrimary")
	if current != primary || (target != "" && target != primary) {
		return nil // asked for already, or done
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels(specs.CNPGInstancePods(name))); err != nil {
		return err
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	for _, p := range pods.Items {
		if p.Name != primary && p.DeletionTimestamp == nil {
			return promote(ctx, c, cluster, p.Name, "a benchmark disturbance (memberLoss Switchover)")
		}
	}
	return fmt.Errorf("cluster %s has no standby to switch over to", name)
}
