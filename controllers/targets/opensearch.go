package targets

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// opensearchServer is an OpenSearch cluster. With its security plugin on,
// it serves HTTPS with the image's demo certificate and an admin password
// from the generated credentials.
type opensearchServer struct{}

func (opensearchServer) Kind() string { return specs.OpenSearchKind }

func (opensearchServer) server(run *benchv1.BenchmarkRun) specs.Server {
	return specs.OpenSearchServer(run)
}

func (opensearchServer) connect(_ context.Context, _ client.Client, run *benchv1.BenchmarkRun, _ specs.Server, o Observed) (Observed, error) {
	o.Endpoint.TLS = run.Spec.Target.OpenSearch.Security
	return o, nil
}
