package targets

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// External is an endpoint the run does not own: it is ready when the
// Secrets it names exist. Their values are never read.
type External struct{}

func (External) Kind() string { return "external" }

// notHere: the run has no pods for this target, so its placement is moot.
func (External) notHere() {}

// Ensure gives load generators the account of the user's Secret, the only
// one the operator knows of: Needs changes nothing here.
func (e External) Ensure(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, _ Needs) (Observed, error) {
	ext := run.Spec.Target.External
	o := Observed{
		Status:   benchv1.TargetStatus{Kind: e.Kind(), Host: ext.Host, Port: ext.Port},
		Endpoint: pod.Endpoint{Host: ext.Host, Port: ext.Port, Database: ext.Database, SessionVariables: sessionStrings(ext.SessionVariables)},
	}
	if ref := ext.SecretRef; ref != nil {
		if missing, err := secretMissing(ctx, c, run.Namespace, ref.Name); err != nil || missing {
			return notReady(o, benchv1.ReasonSecretNotFound, fmt.Sprintf("spec.target.external.secretRef: Secret %q not found", ref.Name)), err
		}
		o.Endpoint.Username = &corev1.SecretKeySelector{LocalObjectReference: *ref, Key: "username", Optional: ptrTrue()}
		o.Endpoint.Password = &corev1.SecretKeySelector{LocalObjectReference: *ref, Key: "password", Optional: ptrTrue()}
	}
	if tls := ext.TLS; tls != nil && tls.Enabled {
		o.Endpoint.TLS, o.Endpoint.ServerName = true, tls.ServerName
		o.Endpoint.TLSVersion, o.Endpoint.TLSCipher = string(tls.Version), tls.Cipher
		if ref := tls.CASecretRef; ref != nil {
			if missing, err := secretMissing(ctx, c, run.Namespace, ref.Name); err != nil || missing {
				return notReady(o, benchv1.ReasonSecretNotFound, fmt.Sprintf("spec.target.external.tls.caSecretRef: Secret %q not found", ref.Name)), err
			}
			o.Endpoint.CASecret = ref.Name
		}
		if ref := tls.ClientCertSecretRef; ref != nil {
			if missing, err := secretMissing(ctx, c, run.Namespace, ref.Name); err != nil || missing {
				return notReady(o, benchv1.ReasonSecretNotFound, fmt.Sprintf("spec.target.external.tls.clientCertSecretRef: Secret %q not found", ref.Name)), err
			}
			o.Endpoint.ClientCertSecret = ref.Name
		}
	}
	o.Ready, o.Reason, o.Message = true, benchv1.ReasonReady, fmt.Sprintf("external endpoint %s:%d", ext.Host, ext.Port)
	return o, nil
}

func (External) Cleanup(context.Context, client.Client, *benchv1.BenchmarkRun) error { return nil }

// secretMissing checks that a Secret exists using metadata only, so the
// operator never holds its data.
func secretMissing(ctx context.Context, c client.Client, ns, name string) (bool, error) {
	s := &metav1.PartialObjectMetadata{}
	s.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

func ptrTrue() *bool { t := true; return &t }
