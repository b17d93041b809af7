package targets

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/certs"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// serverKind is a target kind served by a StatefulSet the run owns. What
// the kinds share (generated credentials, certificates, Services,
// readiness) is serverTarget's; a kind says what its server is and what its
// clients need beyond host, port and credentials.
type serverKind interface {
	Kind() string
	// server describes the kind's StatefulSet and Services for a run.
	server(run *benchv1.BenchmarkRun) specs.Server
	// connect completes the endpoint with what is the kind's own (its
	// database, TLS). A problem the user must fix comes back through
	// notReady (which sets Reason), and nothing more is created; errors
	// are for retrying.
	connect(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, s specs.Server, o Observed) (Observed, error)
}

// serverTarget provisions a serverKind. Credentials and certificates are
// generated into Secrets the run owns; the operator writes them once and
// never reads them back. Its administrator is the one account it has, so
// Needs changes nothing here.
type serverTarget struct{ serverKind }

func (k serverTarget) Ensure(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, _ Needs) (Observed, error) {
	s := k.server(run)
	o := Observed{
		Status:      benchv1.TargetStatus{Kind: k.Kind(), Resource: "StatefulSet/" + s.Name, Host: s.Host(), Port: s.Port},
		Endpoint:    pod.Endpoint{Host: s.Host(), Port: s.Port},
		PodSelector: specs.ServerPodLabels(run),
		Image:       s.Image,
	}
	if s.Replicas <= 1 && s.Role != benchv1.InstanceShard {
		o.PrimarySelector = s.Selector()
	}
	if s.User != "" {
		name := specs.CredentialsSecretName(run, k.Kind())
		err := ensureSecret(ctx, c, run, name, func() (map[string][]byte, error) {
			// OpenSearch's admin password policy wants every character class.
			return map[string][]byte{"username": []byte(s.User), "password": []byte(certs.Password(24) + "-A1")}, nil
		})
		if err != nil {
			return o, fmt.Errorf("while creating the %s credentials: %w", k.Kind(), err)
		}
		ref := corev1.LocalObjectReference{Name: name}
		o.Endpoint.Username = &corev1.SecretKeySelector{LocalObjectReference: ref, Key: "username"}
		o.Endpoint.Password = &corev1.SecretKeySelector{LocalObjectReference: ref, Key: "password"}
	}
	o, err := k.connect(ctx, c, run, s, o)
	if err != nil || o.Reason != "" { // the kind said why it cannot be ready
		return o, err
	}
	servers := k.servers(run)
	if len(servers) > 1 {
		o.Endpoint.ReadHost = servers[1].Host()
	}
	for _, srv := range servers {
		for _, svc := range srv.Services() {
			if err := createIfMissing(ctx, c, svc); err != nil {
				return o, fmt.Errorf("while creating the %s service: %w", k.Kind(), err)
			}
		}
		if err := createIfMissing(ctx, c, k.statefulSet(run, srv)); err != nil {
			return o, fmt.Errorf("while creating the %s statefulset: %w", k.Kind(), err)
		}
	}
	var pods []string
	for _, srv := range servers {
		var sts appsv1.StatefulSet
		if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: srv.Name}, &sts); err != nil {
			if apierrors.IsNotFound(err) {
				// Created an instant ago, and not in the cache yet: its
				// creation event brings the run back.
				return notReady(o, benchv1.ReasonProvisioning, fmt.Sprintf("waiting for StatefulSet %s to appear", srv.Name)), nil
			}
			return o, err
		}
		want := max(srv.Replicas, 1)
		if sts.Status.ReadyReplicas < want {
			return notReady(o, benchv1.ReasonProvisioning, fmt.Sprintf("waiting for StatefulSet %s: %d/%d pods ready", srv.Name, sts.Status.ReadyReplicas, want)), nil
		}
		pods = append(pods, fmt.Sprintf("%d/%d pods", sts.Status.ReadyReplicas, want))
		if len(servers) > 1 {
			pods[len(pods)-1] += " of " + srv.Name
		}
	}
	if cl, ok := k.serverKind.(clustered); ok {
		if job := cl.createJob(run); job != nil {
			o.Endpoint.Cluster = true
			return joined(ctx, c, job, o)
		}
	}
	o.Ready, o.Reason, o.Message = true, benchv1.ReasonReady, fmt.Sprintf("%s is ready (%s)", k.Kind(), strings.Join(pods, ", "))
	return o, nil
}

// replicated is a serverKind whose replicas are StatefulSets of their own
// (another placement, another role), beside the primary's.
type replicated interface {
	// replicas are the replicas' servers; none when replication is off.
	replicas(run *benchv1.BenchmarkRun) []specs.Server
}

// clustered is a serverKind whose servers, once their pods are ready, a
// Job joins into one cluster; the target is ready when the Job succeeded.
type clustered interface {
	// statefulSet replaces the Server's own (several servers per pod);
	// nil when the run's target is not a cluster.
	statefulSet(run *benchv1.BenchmarkRun) *appsv1.StatefulSet
	// createJob is the Job that joins the servers; nil when the run's
	// target is not a cluster.
	createJob(run *benchv1.BenchmarkRun) *batchv1.Job
}

// servers are the kind's server and its replicas' servers, primary first.
func (k serverTarget) servers(run *benchv1.BenchmarkRun) []specs.Server {
	out := []specs.Server{k.server(run)}
	if r, ok := k.serverKind.(replicated); ok {
		out = append(out, r.replicas(run)...)
	}
	return out
}

func (k serverTarget) statefulSet(run *benchv1.BenchmarkRun, s specs.Server) *appsv1.StatefulSet {
	if cl, ok := k.serverKind.(clustered); ok && s.Name == k.server(run).Name {
		if sts := cl.statefulSet(run); sts != nil {
			return sts
		}
	}
	return s.StatefulSet()
}

// ensureTLS issues the server certificate (unless the user brings one) and,
// for two-way TLS, the load generators' client certificate, signed by the
// same CA. The user's certificate needs the CA's key for a client
// certificate, which the operator never has: two-way TLS with a user's
// certificate must bring the client certificate too (not supported yet).
func ensureTLS(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, kind string, s specs.Server, t *benchv1.ServerTLS) error {
	if t.CertificateSecretRef != nil { // two-way TLS with it is refused at admission
		return nil
	}
	var client map[string][]byte
	err := ensureSecret(ctx, c, run, specs.TLSSecretName(run, kind), func() (map[string][]byte, error) {
		clientName := ""
		if t.RequireClientCertificates {
			clientName = s.User
		}
		server, cl, err := certs.ServerSecrets(run.Name, ServerNames(s), clientName, time.Now())
		client = cl
		return server, err
	})
	if err != nil {
		return fmt.Errorf("while issuing the %s server certificate: %w", kind, err)
	}
	if !t.RequireClientCertificates {
		return nil
	}
	if client == nil {
		name := specs.ClientTLSSecretName(run, kind)
		if missing, err := secretMissing(ctx, c, run.Namespace, name); err != nil || !missing {
			return err
		}
		return fmt.Errorf("the client certificate Secret %s is missing and cannot be reissued without the CA's key: delete Secret %s to issue both again",
			name, specs.TLSSecretName(run, kind))
	}
	// Written right after the CA that signed it; if this fails the next
	// reconcile cannot recreate it (the CA key is gone), so the run says so.
	return ensureSecret(ctx, c, run, specs.ClientTLSSecretName(run, kind), func() (map[string][]byte, error) { return client, nil })
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
	s := &corev1.Secret{ObjectMeta: specs.ObjectMeta(run, name, benchv1.RoleTarget), Data: data, Type: corev1.SecretTypeOpaque}
	if err := c.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func (k serverTarget) Cleanup(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun) error {
	if cl, ok := k.serverKind.(clustered); ok {
		if job := cl.createJob(run); job != nil {
			if err := deleteIfExists(ctx, c, job); err != nil {
				return err
			}
		}
	}
	for _, s := range k.servers(run) {
		if err := deleteIfExists(ctx, c, &appsv1.StatefulSet{ObjectMeta: specs.ObjectMeta(run, s.Name, benchv1.RoleTarget)}); err != nil {
			return err
		}
		for _, svc := range s.Services() {
			if err := deleteIfExists(ctx, c, svc); err != nil {
				return err
			}
		}
	}
	// The generated Secrets go with the run (owner references): a kept
	// result may need them to be explained, never to be read.
	return nil
}
