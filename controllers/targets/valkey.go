package targets

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// valkeyServer is Valkey (Redis-compatible), without a password: clients
// need its host and port only. It is one server, a primary with replicas
// (replicaof) in a StatefulSet of their own, or a Valkey Cluster whose
// servers a Job joins once their pods are ready.
type valkeyServer struct{}

func (valkeyServer) Kind() string { return specs.ValkeyKind }

func (valkeyServer) server(run *benchv1.BenchmarkRun) specs.Server {
	if run.Spec.Target.Valkey.Cluster != nil {
		return specs.NewValkeyCluster(run).Server
	}
	return specs.ValkeyServer(run)
}

func (valkeyServer) connect(_ context.Context, _ client.Client, _ *benchv1.BenchmarkRun, _ specs.Server, o Observed) (Observed, error) {
	return o, nil
}

func (valkeyServer) replicas(run *benchv1.BenchmarkRun) []specs.Server {
	if t := run.Spec.Target.Valkey; t.Cluster != nil || t.Replicas < 1 {
		return nil
	}
	return []specs.Server{specs.ValkeyReplicas(run)}
}

func (valkeyServer) statefulSet(run *benchv1.BenchmarkRun) *appsv1.StatefulSet {
	if run.Spec.Target.Valkey.Cluster == nil {
		return nil
	}
	return specs.NewValkeyCluster(run).StatefulSet()
}

func (valkeyServer) createJob(run *benchv1.BenchmarkRun) *batchv1.Job {
	if run.Spec.Target.Valkey.Cluster == nil {
		return nil
	}
	return specs.NewValkeyCluster(run).CreateJob()
}
