package controllers

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// A drain of the primary's node (opt-in: allowNodeDrain): the node is
// cordoned and the primary evicted once, through a write conflict on its
// record and a restarted manager (and every reconcile in between), and
// uncordoned when the measurement ends; the result keeps the cordon on its
// timeline. The same drain due on a node that carries another run's pod
// is refused there and then, and the measurement is Invalid, saying so,
// with the node never cordoned.
func TestDrainNodeCordonsEvictsAndUncordons(t *testing.T) {
	for _, tc := range []struct {
		name     string
		busyNode bool
	}{{"drained", false}, {"refused", true}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			ctx := context.Background()
			node := h.LoadgenNode()
			dbNode := "db-drain-" + tc.name
			h.Node(dbNode, map[string]string{"pool": "standard-v4a"})
			rd := testutil.StartRedis(t)
			// The first record of the disturbances on the Job meets a
			// conflict, as another writer's update would make it.
			faults := &faultyDisturber{}
			h.wrap = faults.wrap
			name := "drain-" + tc.name
			run := &benchv1.BenchmarkRun{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: benchv1.BenchmarkRunSpec{
					Target:    benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}},
					Workload:  benchv1.WorkloadSpec{RedisBenchmark: &benchv1.RedisBenchmarkWorkload{Tests: []string{"set"}, Clients: []int32{4}}},
					Telemetry: benchv1.TelemetrySpec{ServerStatistics: benchv1.TelemetryDisabled},
					Disturbances: &benchv1.DisturbancesSpec{AllowNodeDrain: true, Schedule: []benchv1.Disturbance{{Name: "drain",
						At:         &metav1.Duration{Duration: time.Second},
						MemberLoss: &benchv1.MemberLossDisturbance{Member: benchv1.MemberPrimary, Action: benchv1.ActionDrainNode}}}},
				},
			}
			h.Create(run)
			run = h.Run(name)
			markServerReady(t, h, specs.ValkeyName(run))
			member := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: specs.ValkeyName(run) + "-0", Namespace: h.NS, Labels: specs.ValkeyServer(run).Selector()},
				Spec:       corev1.PodSpec{NodeName: dbNode, Containers: []corev1.Container{{Name: "valkey", Image: "valkey/valkey:8.1"}}},
			}
			if err := k8s.Create(ctx, member); err != nil {
				t.Fatal(err)
			}
			if tc.busyNode {
				other := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: "another-runs-pod", Namespace: h.NS, Labels: map[string]string{benchv1.LabelRunUID: "another-run"}},
					Spec:       corev1.PodSpec{NodeName: dbNode, Containers: []corev1.Container{{Name: "x", Image: "x"}}},
				}
				if err := k8s.Create(ctx, other); err != nil {
					t.Fatal(err)
				}
			}
			job := h.WaitJob(specs.MeasureJobName(run, 0, 1))
			lg := h.Pod(job, 0, node, kit.Running())
			var n corev1.Node
			if !tc.busyNode {
				testutil.Eventually(t, 20*time.Second, "the member's node cordoned and the member evicted", func() error {
					if err := k8s.Get(ctx, client.ObjectKey{Name: dbNode}, &n); err != nil {
						return err
					}
					var p corev1.Pod
					err := k8s.Get(ctx, client.ObjectKeyFromObject(member), &p)
					if !n.Spec.Unschedulable || err == nil && p.DeletionTimestamp == nil {
						return fmt.Errorf("cordoned %v, member: %w", n.Spec.Unschedulable, err)
					}
					return nil
				})
				h.RestartManager(cfg)
			} else {
				testutil.Eventually(t, 20*time.Second, "the drain refused", func() error {
					recs := readDisturbRecords(h.WaitJob(job.Name))
					if len(recs) != 1 || !recs[0].Refused {
						return fmt.Errorf("records %+v", recs)
					}
					return nil
				})
			}
			tool := []string{"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "-c", "4", "-n", "5000", "-t", "set", "--csv"}
			h.End(lg, "redis-benchmark", runner.Options{Command: tool})
			done := h.WaitPhase(name, 30*time.Second, benchv1.PhaseSucceeded, benchv1.PhaseInvalid, benchv1.PhaseFailed)
			if err := k8s.Get(ctx, client.ObjectKey{Name: dbNode}, &n); err != nil || n.Spec.Unschedulable {
				t.Errorf("node %s left cordoned (%v)", dbNode, err)
			}
			res := h.ResultsDocument(t, done).Steps[0].Repetitions[0].Result
			if len(res.Disturbances) != 1 {
				t.Fatalf("disturbances in the result: %+v", res.Disturbances)
			}
			d := res.Disturbances[0]
			t.Logf("%s: %s %q; disturbance %+v", name, done.Status.Phase, res.Reasons, d)
			if tc.busyNode {
				if done.Status.Phase != benchv1.PhaseInvalid || !d.Refused || !strings.Contains(d.Message, "another-runs-pod") {
					t.Errorf("a drain of a node with another run's pod: %s, refused %v (%q)", done.Status.Phase, d.Refused, d.Message)
				}
				return
			}
			if faults.conflicts != 1 {
				t.Errorf("%d conflicts played, want 1", faults.conflicts)
			}
			cordoned := false
			for _, e := range d.Events {
				cordoned = cordoned || e.Subject == "node/"+dbNode && strings.Contains(e.Message, "cordoned")
			}
			if d.TookEffect == nil || d.Node != dbNode || !cordoned {
				t.Errorf("the drain did not take effect on %s, or its cordon is not on the timeline: %+v", dbNode, d)
			}
		})
	}
}
