package controllers

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/targets"
)

// The Valkey topologies' children on a real API server, through the
// target's provisioner as the run reconciler calls it: a primary with
// replicas is two StatefulSets and their Services, ready when both are; a
// cluster is one StatefulSet whose ready pods make the Job that joins them,
// ready when it succeeded and not ready with its reason when it failed.
// Ensure is idempotent, and Cleanup deletes every child, twice over.
func TestValkeyTopologyChildren(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "topo-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// No manager runs here; the runs go, so that no other test's manager
	// finds them.
	t.Cleanup(func() { _ = k8s.DeleteAllOf(ctx, &benchv1.BenchmarkRun{}, client.InNamespace(ns.Name)) })
	for name, c := range map[string]struct {
		valkey    benchv1.ValkeyTarget
		sets, svc []string
		job       string
		jobFails  bool
	}{
		"replicas": {valkey: benchv1.ValkeyTarget{Replicas: 2},
			sets: []string{"replicas-valkey", "replicas-valkey-replicas"},
			svc:  []string{"replicas-valkey", "replicas-valkey-nodes", "replicas-valkey-replicas", "replicas-valkey-replicas-nodes"}},
		// Without replicasPerShard, which the schema's rule must not need.
		"cluster": {valkey: benchv1.ValkeyTarget{Cluster: &benchv1.ValkeyCluster{Shards: 3, InstancesPerNode: 3}},
			sets: []string{"cluster-valkey"}, svc: []string{"cluster-valkey", "cluster-valkey-nodes"}, job: "cluster-valkey-cluster-create"},
		"failed-cluster": {valkey: benchv1.ValkeyTarget{Cluster: &benchv1.ValkeyCluster{Shards: 3, ReplicasPerShard: 1, InstancesPerNode: 3}},
			sets: []string{"failed-cluster-valkey"}, svc: []string{"failed-cluster-valkey", "failed-cluster-valkey-nodes"},
			job: "failed-cluster-valkey-cluster-create", jobFails: true},
	} {
		t.Run(name, func(t *testing.T) {
			run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name}, Spec: benchv1.BenchmarkRunSpec{
				Target:   benchv1.TargetSpec{Valkey: &c.valkey},
				Workload: benchv1.WorkloadSpec{RedisBenchmark: &benchv1.RedisBenchmarkWorkload{}}}}
			if err := k8s.Create(ctx, run); err != nil {
				t.Fatal(err)
			}
			p, err := targets.For(run)
			if err != nil {
				t.Fatal(err)
			}
			ensure := func() targets.Observed {
				t.Helper()
				o, err := p.Ensure(ctx, k8s, run, targets.Needs{})
				if err != nil {
					t.Fatal(err)
				}
				return o
			}
			if o := ensure(); o.Ready || o.Reason != benchv1.ReasonProvisioning {
				t.Fatalf("new target: %+v", o)
			}
			for _, s := range c.sets {
				var sts appsv1.StatefulSet
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: s}, &sts); err != nil {
					t.Fatal(err)
				}
				sts.Status.Replicas, sts.Status.ReadyReplicas = *sts.Spec.Replicas, *sts.Spec.Replicas
				if err := k8s.Status().Update(ctx, &sts); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range c.svc {
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: s}, &corev1.Service{}); err != nil {
					t.Error(err)
				}
			}
			o := ensure()
			if c.job == "" {
				if !o.Ready || o.Endpoint.ReadHost != "replicas-valkey-replicas."+ns.Name+".svc" || o.Endpoint.Cluster {
					t.Errorf("ready replicas: %+v", o)
				}
			} else {
				if o.Ready || !strings.Contains(o.Message, c.job) {
					t.Errorf("before the Job: %+v", o)
				}
				var job batchv1.Job
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: c.job}, &job); err != nil {
					t.Fatal(err)
				}
				now := metav1.Now()
				job.Status.StartTime = &now
				if c.jobFails {
					job.Status.Conditions = []batchv1.JobCondition{
						{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"},
						{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}
				} else {
					job.Status.CompletionTime, job.Status.Succeeded = &now, 1
					job.Status.Conditions = []batchv1.JobCondition{
						{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
						{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
				}
				if err := k8s.Status().Update(ctx, &job); err != nil {
					t.Fatal(err)
				}
				o := ensure()
				if !o.Endpoint.Cluster || o.PrimarySelector != nil {
					t.Errorf("cluster endpoint %+v, primary selector %v", o.Endpoint, o.PrimarySelector)
				}
				if c.jobFails && (o.Ready || o.Reason != benchv1.ReasonClusterNotCreated || !strings.Contains(o.Message, "BackoffLimitExceeded")) {
					t.Errorf("failed Job: %+v", o)
				}
				if !c.jobFails && !o.Ready {
					t.Errorf("succeeded Job: %+v", o)
				}
			}
			ensure() // idempotent: nothing to create, nothing changed
			for range 2 {
				if err := p.Cleanup(ctx, k8s, run); err != nil {
					t.Fatal(err)
				}
			}
			var left []string
			for _, s := range c.sets {
				if !apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: s}, &appsv1.StatefulSet{})) {
					left = append(left, "StatefulSet/"+s)
				}
			}
			for _, s := range c.svc {
				if !apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: s}, &corev1.Service{})) {
					left = append(left, "Service/"+s)
				}
			}
			if c.job != "" && !apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: c.job}, &batchv1.Job{})) {
				left = append(left, "Job/"+c.job)
			}
			if len(left) > 0 {
				t.Errorf("Cleanup left %v", left)
			}
		})
	}
}
