package targets

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// valkeyServer is one Valkey server (Redis-compatible), without a password:
// clients need its host and port only.
type valkeyServer struct{}

func (valkeyServer) Kind() string { return specs.ValkeyKind }

func (valkeyServer) server(run *benchv1.BenchmarkRun) specs.Server { return specs.ValkeyServer(run) }

func (valkeyServer) connect(_ context.Context, _ client.Client, _ *benchv1.BenchmarkRun, _ specs.Server, o Observed) (Observed, error) {
	return o, nil
}
