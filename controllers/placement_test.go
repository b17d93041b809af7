package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// A primary in zone-a and its standby in zone-b, as published comparisons
// set them up. The test plays CloudNativePG, which placed the primary in
// the wrong zone: the operator switches over (status.targetPrimary, as
// `kubectl cnpg promote` does) before it measures; with
// validity.loadGeneratorsInPrimaryZone a load generator in zone-a is
// trusted and one in zone-b is Invalid naming both zones; the environment
// records every instance with its role, node, pool and zone, and the WAL
// and temporary tablespace volumes.
func TestCNPGPrimaryAndStandbyAcrossZones(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	zone := func(pool, z string) map[string]string {
		return map[string]string{"pool": pool, corev1.LabelTopologyZone: z}
	}
	h.Node("zones-pg-a", zone("zones-db", "zone-a"))
	h.Node("zones-pg-b", zone("zones-db", "zone-b"))
	h.Node("zones-lg-a", zone("zones-loadgen", "zone-a"))
	h.Node("zones-lg-b", zone("zones-loadgen", "zone-b"))
	run := kit.PgbenchRun("zones", benchv1.TargetSpec{
		Postgres: &benchv1.PostgresTarget{Instances: 2,
			Replication: &benchv1.PostgresReplication{Mode: benchv1.ReplicationSynchronous, SynchronousReplicas: 1},
			WALStorage:  &benchv1.StorageSpec{Size: resource.MustParse("20Gi")},
			Tablespaces: []benchv1.PostgresTablespace{{Name: "scratch", Storage: benchv1.StorageSpec{Size: resource.MustParse("5Gi")}, Temporary: true}}},
		Placement:        benchv1.Placement{NodeSelector: map[string]string{"pool": "zones-db"}, Zone: "zone-a"},
		ReplicaPlacement: &benchv1.Placement{NodeSelector: map[string]string{"pool": "zones-db"}, Zone: "zone-b"},
	}, []int32{16}, 2)
	run.Spec.Workload.Placement = benchv1.Placement{NodeSelector: map[string]string{"pool": "zones-loadgen"}}
	run.Spec.Workload.SkipPrepare = true
	run.Spec.Validity.LoadGeneratorsInPrimaryZone = true
	h.Create(run)

	name := specs.PostgresClusterName(run)
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(specs.CNPGClusterGVK)
	testutil.Eventually(t, 10*time.Second, "CNPG cluster", func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: name}, cluster)
	})
	// CloudNativePG admitted the spec (its CRD is installed here): the
	// synchronous stanza, the WAL volume and the temporary tablespace.
	if n, _, _ := unstructured.NestedInt64(cluster.Object, "spec", "postgresql", "synchronous", "number"); n != 1 {
		t.Errorf("synchronous.number = %d", n)
	}
	if _, ok, _ := unstructured.NestedMap(cluster.Object, "spec", "walStorage"); !ok {
		t.Error("no walStorage")
	}
	// CloudNativePG's choice: instance 1 (its first, the primary) landed in
	// zone-b, instance 2 in zone-a.
	inherited, _, _ := unstructured.NestedStringMap(cluster.Object, "spec", "inheritedMetadata", "labels")
	instance := func(n, node, role string) *corev1.Pod {
		labels := map[string]string{specs.CNPGInstanceRoleLabel: role}
		for k, v := range inherited {
			labels[k] = v
		}
		for k, v := range specs.CNPGInstancePods(name) {
			labels[k] = v
		}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + n, Labels: labels},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "postgres", Image: "ghcr.io/cloudnative-pg/postgresql:17"}}}}
	}
	first, second := instance("1", "zones-pg-b", "primary"), instance("2", "zones-pg-a", "replica")
	h.Create(first)
	h.Create(second)
	setStatus := func(primary string) {
		t.Helper()
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]any{"phase": specs.CNPGHealthyPhase, "readyInstances": int64(2), "currentPrimary": primary, "targetPrimary": primary} {
			_ = unstructured.SetNestedField(cluster.Object, v, "status", k)
		}
		if err := k8s.Status().Update(ctx, cluster); err != nil {
			t.Fatal(err)
		}
	}
	setStatus(first.Name)

	// The operator asks for a switchover to the instance in zone-a and
	// does not measure until it is done.
	testutil.Eventually(t, 15*time.Second, "switchover asked", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
			return err
		}
		if tp, _, _ := unstructured.NestedString(cluster.Object, "status", "targetPrimary"); tp != second.Name {
			return fmt.Errorf("targetPrimary %q", tp)
		}
		return nil
	})
	// The run says so once its status is written after the patch.
	testutil.Eventually(t, 15*time.Second, "TargetReady SwitchingOver", func() error {
		c := meta.FindStatusCondition(h.Run("zones").Status.Conditions, benchv1.ConditionTargetReady)
		if c == nil || c.Reason != benchv1.ReasonSwitchingOver || !strings.Contains(c.Message, second.Name) {
			return fmt.Errorf("TargetReady %+v", c)
		}
		return nil
	})
	if jobs := h.Jobs(); len(jobs) != 0 {
		t.Fatalf("measured during the switchover: %d jobs", len(jobs))
	}
	// CloudNativePG switches over.
	for pod, role := range map[*corev1.Pod]string{first: "replica", second: "primary"} {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			t.Fatal(err)
		}
		pod.Labels[specs.CNPGInstanceRoleLabel] = role
		if err := k8s.Update(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	setStatus(second.Name)

	fixtureFile := kit.Fixture(t, "pgbench", "pkb-tpcb-16c-5s-r-stdout.txt")
	h.Replay(h.WaitJob(specs.MeasureJobName(run, 0, 1)), "zones-lg-a", "pgbench", fixtureFile)
	h.Replay(h.WaitJob(specs.MeasureJobName(run, 0, 2)), "zones-lg-b", "pgbench", fixtureFile)
	r := h.WaitPhase("zones", 30*time.Second, benchv1.PhaseInvalid)

	reps := r.Status.Steps[0].Repetitions
	if reps[0].Verdict != benchv1.VerdictSucceeded {
		t.Errorf("load generator in the primary's zone: %s %v", reps[0].Verdict, reps[0].Reasons)
	}
	want := "ran in zone zone-b, the target's primary " + second.Name + " in zone zone-a"
	if reps[1].Verdict != benchv1.VerdictInvalid || !strings.Contains(strings.Join(reps[1].Reasons, "; "), want) {
		t.Errorf("load generator in the other zone: %s %v, want Invalid with %q", reps[1].Verdict, reps[1].Reasons, want)
	}
	doc := h.ResultsDocument(t, r)
	if p := doc.Steps[0].Repetitions[1].Result.Parameters; p["loadgenZones"] != "zone-b" || p["primaryZone"] != "zone-a" {
		t.Errorf("recorded zones %v", p)
	}

	got := map[string]string{}
	for _, in := range r.Status.Environment.Instances {
		got[in.Name] = string(in.Role) + "@" + in.Node + "/" + in.Pool + "/" + in.Zone
	}
	for pod, want := range map[string]string{
		second.Name: "primary@zones-pg-a/zones-db/zone-a", first.Name: "replica@zones-pg-b/zones-db/zone-b",
		specs.MeasureJobName(run, 0, 1) + "-pod": "loadgen@zones-lg-a/zones-loadgen/zone-a",
		specs.MeasureJobName(run, 0, 2) + "-pod": "loadgen@zones-lg-b/zones-loadgen/zone-b",
	} {
		if got[pod] != want {
			t.Errorf("instance %s = %q, want %q (all: %v)", pod, got[pod], want, got)
		}
	}
	vols := map[string]string{}
	for _, v := range r.Status.Environment.Volumes {
		vols[v.Purpose] = v.Size.String()
		if v.Temporary != (v.Purpose == "tablespace/scratch") {
			t.Errorf("volume %+v: temporary wrong", v)
		}
	}
	if vols["data"] != "10Gi" || vols["wal"] != "20Gi" || vols["tablespace/scratch"] != "5Gi" {
		t.Errorf("volumes %v", vols)
	}
}
