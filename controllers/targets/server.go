package targets

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/certs"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// ServerKind provisions one of the StatefulSet servers: Valkey, MySQL,
// MongoDB, OpenSearch. Credentials and certificates are generated into Secrets the
// run owns; the operator writes them once and never reads them back.
type ServerKind struct {
	Kind string
}

func (k ServerKind) server(run *benchv1.BenchmarkRun) specs.Server {
	switch k.Kind {
	case "valkey":
		return specs.ValkeyServer(run)
	case "mysql":
		return specs.MySQLServer(run)
	case "mongodb":
		return specs.MongoDBServer(run)
	default:
		return specs.OpenSearchServer(run)
	}
}

func (k ServerKind) Ensure(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun) (Observed, error) {
	s := k.server(run)
	o := Observed{
		Status:      benchv1.TargetStatus{Kind: k.Kind, Resource: "StatefulSet/" + s.Name, Host: s.Host(), Port: s.Port},
		Endpoint:    workloads.Endpoint{Host: s.Host(), Port: s.Port},
		PodSelector: specs.ServerPodLabels(run),
		Image:       s.Image,
	}
	if s.User != "" {
		name := specs.CredentialsSecretName(run, k.Kind)
		err := ensureSecret(ctx, c, run, name, func() (map[string][]byte, error) {
			// OpenSearch's admin password policy wants every character class.
			return map[string][]byte{"username": []byte(s.User), "password": []byte(certs.Password(24) + "-A1")}, nil
		})
		if err != nil {
			return o, fmt.Errorf("while creating the %s credentials: %w", k.Kind, err)
		}
		ref := corev1.LocalObjectReference{Name: name}
		o.Endpoint.Username = &corev1.SecretKeySelector{LocalObjectReference: ref, Key: "username"}
		o.Endpoint.Password = &corev1.SecretKeySelector{LocalObjectReference: ref, Key: "password"}
	}
	switch k.Kind {
	case "mysql":
		t := run.Spec.Target.MySQL
		o.Endpoint.Database = t.Database
		if t.TLS != nil && t.TLS.Enabled {
			if err := k.ensureTLS(ctx, c, run, s, t.TLS); err != nil {
				return o, err
			}
			o.Endpoint.TLS, o.Endpoint.ServerName = true, s.Host()
			o.Endpoint.CASecret = specs.TLSSecretName(run, k.Kind)
			if ref := t.TLS.CertificateSecretRef; ref != nil {
				if missing, err := secretMissing(ctx, c, run.Namespace, ref.Name); err != nil || missing {
					return notReady(o, benchv1.ReasonSecretNotFound, fmt.Sprintf("spec.target.mysql.tls.certificateSecretRef: Secret %q not found", ref.Name)), err
				}
				o.Endpoint.CASecret = ref.Name
			}
			if t.TLS.RequireClientCertificates {
				o.Endpoint.ClientCertSecret = specs.ClientTLSSecretName(run, k.Kind)
			}
		}
	case "mongodb":
		o.Endpoint.Database = run.Spec.Target.MongoDB.Database
	case "opensearch":
		o.Endpoint.TLS = run.Spec.Target.OpenSearch.Security
	}
	for _, svc := range s.Services() {
		if err := createIfMissing(ctx, c, svc); err != nil {
			return o, fmt.Errorf("while creating the %s service: %w", k.Kind, err)
		}
	}
	if err := createIfMissing(ctx, c, s.StatefulSet()); err != nil {
		return o, fmt.Errorf("while creating the %s statefulset: %w", k.Kind, err)
	}
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: s.Name}, &sts); err != nil {
		return o, err
	}
	want := max(s.Replicas, 1)
	if sts.Status.ReadyReplicas < want {
		return notReady(o, benchv1.ReasonProvisioning, fmt.Sprintf("waiting for StatefulSet %s: %d/%d pods ready", s.Name, sts.Status.ReadyReplicas, want)), nil
	}
	o.Ready, o.Reason, o.Message = true, benchv1.ReasonReady, fmt.Sprintf("%s is ready (%d/%d pods)", k.Kind, sts.Status.ReadyReplicas, want)
	return o, nil
}

// ensureTLS issues the server certificate (unless the user brings one) and,
// for two-way TLS, the load generators' client certificate, signed by the
// same CA. The user's certificate needs the CA's key for a client
// certificate, which the operator never has: two-way TLS with a user's
// certificate must bring the client certificate too (not supported yet).
func (k ServerKind) ensureTLS(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, s specs.Server, t *benchv1.ServerTLS) error {
	if t.CertificateSecretRef != nil {
		if t.RequireClientCertificates {
			return fmt.Errorf("spec.target.mysql.tls: requireClientCertificates needs an operator-generated certificate (leave certificateSecretRef empty)")
		}
		return nil
	}
	var client map[string][]byte
	err := ensureSecret(ctx, c, run, specs.TLSSecretName(run, k.Kind), func() (map[string][]byte, error) {
		clientName := ""
		if t.RequireClientCertificates {
			clientName = s.User
		}
		server, cl, err := certs.ServerSecrets(run.Name, ServerNames(s), clientName, time.Now())
		client = cl
		return server, err
	})
	if err != nil {
		return fmt.Errorf("while issuing the %s server certificate: %w", k.Kind, err)
	}
	if !t.RequireClientCertificates {
		return nil
	}
	if client == nil {
		name := specs.ClientTLSSecretName(run, k.Kind)
		if missing, err := secretMissing(ctx, c, run.Namespace, name); err != nil || !missing {
			return err
		}
		return fmt.Errorf("the client certificate Secret %s is missing and cannot be reissued without the CA's key: delete Secret %s to issue both again",
			name, specs.TLSSecretName(run, k.Kind))
	}
	// Written right after the CA that signed it; if this fails the next
	// reconcile cannot recreate it (the CA key is gone), so the run says so.
	return ensureSecret(ctx, c, run, specs.ClientTLSSecretName(run, k.Kind), func() (map[string][]byte, error) { return client, nil })
}

// ServerNames are the DNS names a server certificate carries: the Service's
// short, namespaced and fully qualified names.
func ServerNames(s specs.Server) []string {
	ns := s.Run.Namespace
	return []string{s.Host(), s.Name, s.Name + "." + ns, s.Name + "." + ns + ".svc.cluster.local"}
}

// ensureSecret creates a Secret owned by the run from gen, unless it exists.
// gen runs only when the Secret is missing; its values are never logged.
func ensureSecret(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, name string, gen func() (map[string][]byte, error)) error {
	missing, err := secretMissing(ctx, c, run.Namespace, name)
	if err != nil || !missing {
		return err
	}
	data, err := gen()
	if err != nil {
		return err
	}
	s := &corev1.Secret{ObjectMeta: specs.ObjectMeta(run, name, specs.RoleTarget), Data: data, Type: corev1.SecretTypeOpaque}
	if err := c.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func (k ServerKind) Cleanup(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun) error {
	s := k.server(run)
	if err := deleteIfExists(ctx, c, &appsv1.StatefulSet{ObjectMeta: specs.ObjectMeta(run, s.Name, specs.RoleTarget)}); err != nil {
		return err
	}
	for _, svc := range s.Services() {
		if err := deleteIfExists(ctx, c, svc); err != nil {
			return err
		}
	}
	// The generated Secrets go with the run (owner references): a kept
	// result may need them to be explained, never to be read.
	return nil
}
