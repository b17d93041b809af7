package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// The phases issue 16 changed, the way they break: provisioning (the
// switchover of a CloudNativePG primary onto its placement), measuring
// (the zone judgement of every measurement) and finishing (the
// environment's instances and volumes). Several runs across zones at once,
// each measurement's first status write refused (a conflict: the phase
// runs again), and the manager restarted in the middle. Afterwards: each
// switchover was asked once (status.targetPrimaryTimestamp unchanged
// since), every measurement is in status once and in the results document
// with the same zones, no stored measurement was rewritten, and the
// environment lists each instance once.
func TestPlacementPhasesAreIdempotent(t *testing.T) {
	const runs, reps = 4, 2
	h := newHarness(t)
	ctx := context.Background()
	ic := newInterferer()
	ic.refuseRecords = true
	h.wrap = ic.wrap
	h.RestartManager(cfg)
	zone := func(pool, z string) map[string]string {
		return map[string]string{"pool": pool, corev1.LabelTopologyZone: z}
	}
	h.Node("idz-lg-a", zone("idz-loadgen", "zone-a"))
	h.Node("idz-lg-b", zone("idz-loadgen", "zone-b"))
	for n := range runs {
		h.Node(fmt.Sprintf("idz-pg-%d-a", n), zone(fmt.Sprintf("idz-db-%d", n), "zone-a"))
		h.Node(fmt.Sprintf("idz-pg-%d-b", n), zone(fmt.Sprintf("idz-db-%d", n), "zone-b"))
		pool := map[string]string{"pool": fmt.Sprintf("idz-db-%d", n)}
		run := kit.PgbenchRun(fmt.Sprintf("idz-%d", n), benchv1.TargetSpec{
			Postgres:         &benchv1.PostgresTarget{Instances: 2, WALStorage: &benchv1.StorageSpec{}},
			Placement:        benchv1.Placement{NodeSelector: pool, Zone: "zone-a"},
			ReplicaPlacement: &benchv1.Placement{NodeSelector: pool, Zone: "zone-b"},
		}, []int32{8}, reps)
		run.Spec.AllowSharedNodes = true
		run.Spec.Workload.SkipPrepare = true
		run.Spec.Workload.Placement = benchv1.Placement{NodeSelector: map[string]string{"pool": "idz-loadgen"}}
		run.Spec.Validity.LoadGeneratorsInPrimaryZone = true
		h.Create(run)
	}
	fixtureFile := kit.Fixture(t, "pgbench", "pkb-tpcb-16c-5s-r-stdout.txt")
	// The test plays CloudNativePG: instance 1 (its primary) in zone-b,
	// the wrong side, so that every run switches over.
	played := map[string]bool{}
	switched := map[string]string{} // cluster → the targetPrimaryTimestamp of its one switchover
	answered := map[string]bool{}
	restarted := false
	testutil.Eventually(t, 3*time.Minute, "every run ending", func() error {
		ended := 0
		for n := range runs {
			name := fmt.Sprintf("idz-%d", n)
			run := h.Run(name)
			if run.Status.Phase.Terminal() {
				ended++
			}
			cl := &unstructured.Unstructured{}
			cl.SetGroupVersionKind(specs.CNPGClusterGVK)
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: specs.PostgresClusterName(run)}, cl); err != nil {
				continue
			}
			if !played[cl.GetName()] {
				played[cl.GetName()] = true
				playInstances(t, h, cl, fmt.Sprintf("idz-pg-%d-b", n), fmt.Sprintf("idz-pg-%d-a", n))
				continue
			}
			current, _, _ := unstructured.NestedString(cl.Object, "status", "currentPrimary")
			target, _, _ := unstructured.NestedString(cl.Object, "status", "targetPrimary")
			stamp, _, _ := unstructured.NestedString(cl.Object, "status", "targetPrimaryTimestamp")
			if target != current && stamp != "" {
				if prev, ok := switched[cl.GetName()]; ok && prev != stamp {
					t.Errorf("%s: the switchover was asked again (%s, then %s)", cl.GetName(), prev, stamp)
				}
				switched[cl.GetName()] = stamp
				switchTo(t, h, cl, target)
			}
		}
		var jobs batchv1.JobList
		if err := k8s.List(ctx, &jobs, client.InNamespace(h.NS)); err != nil {
			return err
		}
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if answered[j.Name] {
				continue
			}
			answered[j.Name] = true
			// Repetition 1 in the primary's zone, 2 in the other.
			node := "idz-lg-a"
			if strings.HasSuffix(j.Name, "-r2") {
				node = "idz-lg-b"
			}
			h.Replay(j, node, "pgbench", fixtureFile)
		}
		h.RestartOnce(&restarted, len(answered) >= runs, cfg)
		return kit.AllEnded(ended, runs)
	})
	if len(switched) != runs {
		t.Errorf("%d switchovers asked, want one per run (%d)", len(switched), runs)
	}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if len(ic.rewritten) > 0 {
		t.Errorf("stored measurements rewritten with other bytes: %v", ic.rewritten)
	}
	if len(ic.recordRefused) == 0 {
		t.Error("no status write was refused: the conflicts were not exercised")
	}
	for n := range runs {
		run := h.Run(fmt.Sprintf("idz-%d", n))
		doc := h.ResultsDocument(t, run)
		status := run.Status.Steps[0].Repetitions
		if run.Status.Phase != benchv1.PhaseInvalid || len(status) != reps || len(doc.Steps[0].Repetitions) != reps {
			t.Errorf("%s: %s, %d repetitions in status, %d in the document, want Invalid and %d", run.Name, run.Status.Phase,
				len(status), len(doc.Steps[0].Repetitions), reps)
			continue
		}
		for i, want := range []string{"zone-a", "zone-b"} {
			p := doc.Steps[0].Repetitions[i].Result.Parameters
			if p["loadgenZones"] != want || p["primaryZone"] != "zone-a" {
				t.Errorf("%s repetition %d: zones %s / %s", run.Name, i+1, p["loadgenZones"], p["primaryZone"])
			}
		}
		if status[0].Verdict != benchv1.VerdictSucceeded || status[1].Verdict != benchv1.VerdictInvalid || len(status[1].Reasons) != 1 {
			t.Errorf("%s: verdicts %s %v, %s %v: want Succeeded, then Invalid for the zone once", run.Name, status[0].Verdict, status[0].Reasons,
				status[1].Verdict, status[1].Reasons)
		}
		seen := map[string]int{}
		for _, in := range run.Status.Environment.Instances {
			seen[in.Name]++
		}
		for pod, count := range seen {
			if count != 1 {
				t.Errorf("%s: instance %s listed %d times", run.Name, pod, count)
			}
		}
		if len(seen) != 4 || len(run.Status.Environment.Volumes) != 2 {
			t.Errorf("%s: instances %v, volumes %+v", run.Name, seen, run.Status.Environment.Volumes)
		}
	}
}

// playInstances creates a CloudNativePG cluster's two instance pods, the
// primary on first and the standby on second, and reports it healthy.
func playInstances(t *testing.T, h *harness, cl *unstructured.Unstructured, first, second string) {
	t.Helper()
	inherited, _, _ := unstructured.NestedStringMap(cl.Object, "spec", "inheritedMetadata", "labels")
	for i, node := range []string{first, second} {
		labels := map[string]string{specs.CNPGInstanceRoleLabel: map[bool]string{true: "primary", false: "replica"}[i == 0]}
		for k, v := range inherited {
			labels[k] = v
		}
		for k, v := range specs.CNPGInstancePods(cl.GetName()) {
			labels[k] = v
		}
		h.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", cl.GetName(), i+1), Labels: labels},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "postgres", Image: "ghcr.io/cloudnative-pg/postgresql:17"}}}})
	}
	setCNPGPrimary(t, cl, cl.GetName()+"-1")
}

// switchTo plays CloudNativePG's switchover to target.
func switchTo(t *testing.T, h *harness, cl *unstructured.Unstructured, target string) {
	t.Helper()
	ctx := context.Background()
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(h.NS), client.MatchingLabels(specs.CNPGInstancePods(cl.GetName()))); err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		p.Labels[specs.CNPGInstanceRoleLabel] = map[bool]string{true: "primary", false: "replica"}[p.Name == target]
		if err := k8s.Update(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	setCNPGPrimary(t, cl, target)
}

// setCNPGPrimary reports the cluster healthy with primary current (and
// any switchover done).
func setCNPGPrimary(t *testing.T, cl *unstructured.Unstructured, primary string) {
	t.Helper()
	patch := fmt.Sprintf(`{"status":{"phase":%q,"readyInstances":2,"currentPrimary":%q,"targetPrimary":%q}}`, specs.CNPGHealthyPhase, primary, primary)
	if err := k8s.Status().Patch(context.Background(), cl, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}
