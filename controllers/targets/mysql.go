package targets

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// mysqlServer is a MySQL server (and its replicas) with a generated root password, and TLS
// (one- or two-way) when the spec asks for it: the operator issues the
// certificates unless the user brings the server's.
type mysqlServer struct{}

func (mysqlServer) Kind() string { return specs.MySQLKind }

func (mysqlServer) server(run *benchv1.BenchmarkRun) specs.Server { return specs.MySQLServer(run) }

// replicas replicate the primary by GTID, each a pod of their StatefulSet
// (specs.MySQLReplicas).
func (mysqlServer) replicas(run *benchv1.BenchmarkRun) []specs.Server {
	if run.Spec.Target.MySQL.Replicas < 1 {
		return nil
	}
	return []specs.Server{specs.MySQLReplicas(run)}
}

func (k mysqlServer) connect(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, s specs.Server, o Observed) (Observed, error) {
	t := run.Spec.Target.MySQL
	o.Endpoint.Database = t.Database
	o.Endpoint.SessionVariables = sessionStrings(t.SessionVariables)
	if t.TLS == nil || !t.TLS.Enabled {
		return o, nil
	}
	if t.TLS.CertificateSecretRef != nil && t.TLS.RequireClientCertificates {
		// Refused at admission; an object stored before that rule ends
		// here instead of retrying until its timeout.
		return notReady(o, benchv1.ReasonInvalidSpec, "spec.target.mysql.tls.requireClientCertificates: needs an operator-generated certificate (leave certificateSecretRef empty)"), nil
	}
	if err := ensureTLS(ctx, c, run, k.Kind(), s, t.TLS); err != nil {
		return o, err
	}
	o.Endpoint.TLS, o.Endpoint.ServerName = true, s.Host()
	o.Endpoint.TLSVersion, o.Endpoint.TLSCipher = string(t.TLS.Version), t.TLS.Cipher
	o.Endpoint.CASecret = specs.TLSSecretName(run, k.Kind())
	if ref := t.TLS.CertificateSecretRef; ref != nil {
		if missing, err := secretMissing(ctx, c, run.Namespace, ref.Name); err != nil || missing {
			return notReady(o, benchv1.ReasonSecretNotFound, fmt.Sprintf("spec.target.mysql.tls.certificateSecretRef: Secret %q not found", ref.Name)), err
		}
		o.Endpoint.CASecret = ref.Name
	}
	if t.TLS.RequireClientCertificates {
		o.Endpoint.ClientCertSecret = specs.ClientTLSSecretName(run, k.Kind())
	}
	return o, nil
}
