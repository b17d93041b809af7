package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// quotaNS is a namespace whose quota allows no pod.
const quotaNS = "perf-quota"

// stuckYAML: three runs whose pods cannot start, each for a reason the real
// kube-scheduler, StatefulSet and Job controllers and quota admission give:
// a load generator asking for more CPU than a loadgen node has, a Valkey
// target asking for more than a standard-v4a node has, and a load
// generator in a namespace whose quota allows no pod.
const stuckYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: lg-too-big
spec:
  allowSharedNodes: true
  deadlines: {podStart: 40s}
  target:
    external: {host: 127.0.0.1, port: 6379}
  workload:
    redisBenchmark: {tests: [set], requests: 1000, clients: [1]}
    placement:
      nodeSelector: {pool: loadgen}
    resources:
      requests: {cpu: "64"}
---
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: valkey-too-big
spec:
  allowSharedNodes: true
  deadlines: {podStart: 40s}
  target:
    valkey:
      resources:
        requests: {cpu: "64"}
    placement:
      nodeSelector: {pool: standard-v4a}
  workload:
    redisBenchmark: {tests: [set], requests: 1000, clients: [1]}
    placement:
      nodeSelector: {pool: loadgen}
`

const quotaYAML = `
apiVersion: v1
kind: ResourceQuota
metadata:
  name: no-pods
spec:
  hard: {pods: "0"}
`

const quotaRunYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: quota-refused
spec:
  allowSharedNodes: true
  deadlines: {podStart: 40s}
  target:
    external: {host: 127.0.0.1, port: 6379}
  workload:
    redisBenchmark: {tests: [set], requests: 1000, clients: [1]}
    placement:
      nodeSelector: {pool: loadgen}
`

// applyStuck applies the runs whose pods cannot start.
func applyStuck(ctx context.Context, t *testing.T, c *sim.Cluster) {
	t.Helper()
	if out, err := c.Kubectl(ctx, strings.NewReader(stuckYAML), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := c.Kubectl(ctx, strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+quotaNS+"\n"), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := c.Kubectl(ctx, strings.NewReader(quotaYAML), "apply", "-n", quotaNS, "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The API server's quota admission reads quotas from its informer (an
	// empty namespace's lookup is cached for 30 s): until the quota has
	// its status, the API server may not know it yet, and a loaded machine
	// let a pod through (CI). The run comes once the quota has its status,
	// which reaches the admission's informer after the quota itself.
	testutil.Eventually(t, time.Minute, "quota no-pods has its status", func() error {
		q, err := c.Clientset.CoreV1().ResourceQuotas(quotaNS).Get(ctx, "no-pods", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if _, ok := q.Status.Hard[corev1.ResourcePods]; !ok {
			return fmt.Errorf("status.hard %v", q.Status.Hard)
		}
		return nil
	})
	if out, err := c.Kubectl(ctx, strings.NewReader(quotaRunYAML), "apply", "-n", quotaNS, "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// checkStuck: each run names its pod within a minute of its creation, in
// an event and on the phase's condition, with Kubernetes' reason and what
// it concerns, and fails with it at spec.deadlines.podStart (40 s), not at
// its timeout (2 h).
func checkStuck(ctx context.Context, t *testing.T, c *sim.Cluster, dyn dynamic.Interface) {
	t.Helper()
	cases := []struct {
		namespace, name string
		want            []string
	}{
		{ns, "lg-too-big", []string{"Unschedulable", "Insufficient cpu", "nodeSelector pool=loadgen", "requests cpu 64"}},
		{ns, "valkey-too-big", []string{"Unschedulable", "Insufficient cpu", "nodeSelector pool=standard-v4a", "requests cpu 64"}},
		{quotaNS, "quota-refused", []string{"FailedCreate", "Job quota-refused-", "exceeded quota: no-pods"}},
	}
	for _, tc := range cases {
		var run *benchv1.BenchmarkRun
		testutil.Eventually(t, 2*time.Minute, tc.name+" failed", func() error {
			r, err := getRunIn(ctx, dyn, tc.namespace, tc.name)
			if err != nil {
				return err
			}
			if !r.Status.Phase.Terminal() {
				return fmt.Errorf("%s is %s (%s)", tc.name, r.Status.Phase, conditionsOf(r))
			}
			run = r
			return nil
		})
		c0 := findCond(run, benchv1.ConditionCompleted)
		if run.Status.Phase != benchv1.PhaseFailed || c0 == nil || c0.Reason != benchv1.ReasonPodNotStarted || !strings.Contains(c0.Message, "spec.deadlines.podStart is 40s") {
			t.Errorf("%s ended %s: %s", tc.name, run.Status.Phase, conditionsOf(run))
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(c0.Message, w) || !strings.Contains(run.Status.Message, w) {
				t.Errorf("%s: the condition and status.message must say %q: %s / %s", tc.name, w, c0.Message, run.Status.Message)
			}
		}
		if took := run.Status.CompletionTime.Sub(run.CreationTimestamp.Time); took > 90*time.Second {
			t.Errorf("%s failed %s after its creation: podStart is 40s", tc.name, took)
		}
		// The manager's events reach the API server from its broadcaster's
		// queue, after the status that a loaded machine may store first (a
		// CI run listed none right after the run ended): read until one
		// is there, for 30 s.
		var evs *corev1.EventList
		named := false
		_ = testutil.Poll(ctx, 30*time.Second, 500*time.Millisecond, "the PodNotStarted event", func() error {
			var err error
			if evs, err = c.Clientset.CoreV1().Events(tc.namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + tc.name + ",reason=" + benchv1.ReasonPodNotStarted}); err != nil {
				return err
			}
			for _, e := range evs.Items {
				first := e.FirstTimestamp.Time
				if first.IsZero() {
					first = e.EventTime.Time
				}
				if e.Type == corev1.EventTypeWarning && first.Sub(run.CreationTimestamp.Time) < time.Minute && strings.Contains(e.Message, tc.want[0]) {
					named = true
				}
			}
			if !named {
				return fmt.Errorf("none yet")
			}
			return nil
		})
		if !named {
			t.Errorf("%s: no Warning event %s within a minute of its creation: %+v", tc.name, benchv1.ReasonPodNotStarted, evs)
		}
		t.Logf("%s: %s (named, then failed %s after its creation)", tc.name, run.Status.Message, run.Status.CompletionTime.Sub(run.CreationTimestamp.Time).Round(time.Second))
	}
}

func findCond(run *benchv1.BenchmarkRun, t string) *metav1.Condition {
	for i := range run.Status.Conditions {
		if run.Status.Conditions[i].Type == t {
			return &run.Status.Conditions[i]
		}
	}
	return nil
}
