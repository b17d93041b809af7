package targets

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// mongodbServer is one MongoDB server with generated root credentials;
// clients use the database the spec names.
type mongodbServer struct{}

func (mongodbServer) Kind() string { return specs.MongoDBKind }

func (mongodbServer) server(run *benchv1.BenchmarkRun) specs.Server { return specs.MongoDBServer(run) }

func (mongodbServer) connect(_ context.Context, _ client.Client, run *benchv1.BenchmarkRun, _ specs.Server, o Observed) (Observed, error) {
	o.Endpoint.Database = run.Spec.Target.MongoDB.Database
	return o, nil
}
