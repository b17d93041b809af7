package controllers

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/targets"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// Table tests of the pure decisions the reconcilers take: the run's verdict,
// the order of a comparison's runs, and the nodes a run may land on.

func TestVerdict(t *testing.T) {
	rep := func(i int32, v benchv1.Verdict, reasons ...string) benchv1.RepetitionStatus {
		return benchv1.RepetitionStatus{Index: i, Verdict: v, Reasons: reasons}
	}
	cases := map[string]struct {
		steps  []benchv1.StepStatus
		phase  benchv1.Phase
		reason string
	}{
		"nothing measured": {phase: benchv1.PhaseFailed, reason: benchv1.ReasonAwaitingResults},
		"all succeeded": {
			steps: []benchv1.StepStatus{{Name: "a", Repetitions: []benchv1.RepetitionStatus{rep(1, benchv1.VerdictSucceeded), rep(2, benchv1.VerdictSucceeded)}}},
			phase: benchv1.PhaseSucceeded, reason: benchv1.ReasonAllValid,
		},
		"one invalid": {
			steps: []benchv1.StepStatus{{Name: "a", Repetitions: []benchv1.RepetitionStatus{rep(1, benchv1.VerdictSucceeded), rep(2, benchv1.VerdictInvalid, "errors")}}},
			phase: benchv1.PhaseInvalid, reason: benchv1.ReasonSomeInvalid,
		},
		"a failure outranks an invalid one": {
			steps: []benchv1.StepStatus{
				{Name: "a", Repetitions: []benchv1.RepetitionStatus{rep(1, benchv1.VerdictInvalid, "errors")}},
				{Name: "b", Repetitions: []benchv1.RepetitionStatus{rep(1, benchv1.VerdictFailed, "crashed")}},
			},
			phase: benchv1.PhaseFailed, reason: benchv1.ReasonSomeFailed,
		},
		"valid but unstable": {
			steps: []benchv1.StepStatus{{Name: "a", Unstable: true, Repetitions: []benchv1.RepetitionStatus{rep(1, benchv1.VerdictSucceeded), rep(2, benchv1.VerdictSucceeded)}}},
			phase: benchv1.PhaseInvalid, reason: benchv1.ReasonUnstable,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			run := &benchv1.BenchmarkRun{Status: benchv1.BenchmarkRunStatus{Steps: tc.steps}}
			phase, reason, msg := verdict(run)
			if phase != tc.phase || reason != tc.reason || msg == "" {
				t.Errorf("verdict = %s, %s, %q; want %s, %s", phase, reason, msg, tc.phase, tc.reason)
			}
		})
	}
}

func TestCandidateNodes(t *testing.T) {
	node := func(name, pool string, taints ...corev1.Taint) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": pool}}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	dedicated := corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}
	notReady := corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule}
	nodes := []corev1.Node{
		node("lg-1", "loadgen"), node("lg-2", "loadgen", notReady),
		node("db-1", "standard-v4a", dedicated), node("db-2", "standard-v4a"),
	}
	pool := func(p string) benchv1.Placement { return benchv1.Placement{NodeSelector: map[string]string{"pool": p}} }
	cases := map[string]struct {
		target  benchv1.TargetSpec
		loadgen benchv1.Placement
		want    []string
	}{
		"external target: the load generators' nodes only, a not-ready taint does not count": {
			target:  benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "db"}, Placement: pool("standard-v4a")},
			loadgen: pool("loadgen"), want: []string{"lg-1", "lg-2"},
		},
		"owned target: its pool too, but not a node tainted for others": {
			target:  benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}, Placement: pool("standard-v4a")},
			loadgen: pool("loadgen"), want: []string{"db-2", "lg-1", "lg-2"},
		},
		"a toleration opens the tainted node": {
			target: benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}, Placement: benchv1.Placement{
				NodeSelector: map[string]string{"pool": "standard-v4a"},
				Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db", Effect: corev1.TaintEffectNoSchedule}},
			}},
			loadgen: pool("loadgen"), want: []string{"db-1", "db-2", "lg-1", "lg-2"},
		},
		"no selector: every untainted node": {
			target: benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "db"}},
			want:   []string{"db-2", "lg-1", "lg-2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			run := &benchv1.BenchmarkRun{Spec: benchv1.BenchmarkRunSpec{Target: tc.target, Workload: benchv1.WorkloadSpec{Placement: tc.loadgen}}}
			var got []string
			for n := range candidateNodes(run, nodes) {
				got = append(got, n)
			}
			if diff := cmp.Diff(tc.want, got, cmpSorted); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpSorted = cmp.Transformer("sorted", func(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
})

// The foreign kinds the targets own (CloudNativePG's Cluster) are watched
// when served: envtest serves CloudNativePG's CRDs.
func TestServedOwnedKinds(t *testing.T) {
	served, missing, err := targets.ServedOwnedKinds(k8s.RESTMapper())
	if err != nil {
		t.Fatal(err)
	}
	if len(served) == 0 || served[0] != specs.CNPGClusterGVK || len(missing) != 0 {
		t.Fatalf("served %v, missing %v: want CloudNativePG's Cluster served", served, missing)
	}
}
