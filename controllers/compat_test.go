package controllers

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The suites run against the oldest Kubernetes docs/install.md claims as
// well as go.mod's (make compat). These find out what the API server in
// front of them does, rather than trusting its version number.

// serverServes reports whether the API server serves kind in groupVersion.
func serverServes(t *testing.T, groupVersion, kind string) bool {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	list, err := dc.ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Kind == kind {
			return true
		}
	}
	return false
}

// serverVersion is the API server's gitVersion, for skip messages.
func serverVersion(t *testing.T) string {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	return v.GitVersion
}

// statefulSetTemplatesValidated reports whether the API server refuses a
// StatefulSet whose pod template is invalid (tolerations is the example).
// Kubernetes 1.28 does not validate a StatefulSet's pod spec: the
// StatefulSet is created and its pods are refused later.
func statefulSetTemplatesValidated(t *testing.T, ns string, tolerations []corev1.Toleration) bool {
	t.Helper()
	labels := map[string]string{"app": "template-check"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "template-check", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Tolerations: tolerations,
					Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
	return k8s.Create(context.Background(), sts, client.DryRunAll) != nil
}
