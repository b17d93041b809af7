package chart

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// imageRegistry remaps the manager's and the runner's images in the chart
// and reaches the manager as --image-registry; runImagePullSecrets as
// --image-pull-secrets; admission.allowedImages as --allowed-images. None
// of the three flags is rendered by default.
func TestAirGapValuesReachTheManager(t *testing.T) {
	const registry = "registry.internal:5000/mirror"
	dep := one[appsv1.Deployment](t, render(t, "imageRegistry="+registry, "runImagePullSecrets[0].name=mirror-pull",
		"runImagePullSecrets[1].name=team-pull", "admission.allowedImages={registry.internal:5000/,docker.io/library/postgres:}"), "Deployment")
	c := dep.Spec.Template.Spec.Containers[0]
	if !strings.HasPrefix(c.Image, registry+"/dbperf-io/dbperf-operator:") {
		t.Errorf("manager image %s, want it under %s", c.Image, registry)
	}
	var runner string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--runner-image="); ok {
			runner = v
		}
	}
	if !strings.HasPrefix(runner, registry+"/dbperf-io/dbperf-runner:") {
		t.Errorf("--runner-image=%s, want it under %s", runner, registry)
	}
	for _, want := range []string{"--image-registry=" + registry, "--image-pull-secrets=mirror-pull,team-pull",
		"--allowed-images=registry.internal:5000/,docker.io/library/postgres:"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("manager args %v lack %s", c.Args, want)
		}
	}

	plain := one[appsv1.Deployment](t, render(t), "Deployment").Spec.Template.Spec.Containers[0]
	for _, a := range plain.Args {
		for _, flag := range []string{"--image-registry", "--image-pull-secrets", "--allowed-images"} {
			if strings.HasPrefix(a, flag) {
				t.Errorf("rendered by default: %s", a)
			}
		}
	}
}

// The chart's remap (_helpers.tpl) is the manager's (specs.RemapImage).
func TestChartRemapIsTheManagers(t *testing.T) {
	for _, repo := range []string{"ghcr.io/dbperf-io/dbperf-operator", "dbperf-operator", "team/dbperf-operator",
		"docker.io/dbperf-operator", "localhost:5000/a/dbperf-operator", "localhost/dbperf-operator"} {
		for _, registry := range []string{"registry.internal", "registry.internal:5000/mirror", "localhost:5000/"} {
			dep := one[appsv1.Deployment](t, render(t, "imageRegistry="+registry, "image.repository="+repo, "image.tag=v1"), "Deployment")
			if got, want := dep.Spec.Template.Spec.Containers[0].Image, specs.RemapImage(repo+":v1", registry); got != want {
				t.Errorf("%s under %s: the chart renders %s, the manager %s", repo, registry, got, want)
			}
		}
	}
}

// A registry whose host is no host, or that is no registry, is refused.
func TestImageRegistryRefused(t *testing.T) {
	for set, want := range map[string]string{
		"imageRegistry=mirror":                  "not localhost",
		"imageRegistry=https://registry.local":  "/imageRegistry",
		"imageRegistry=registry.local/m:1":      "/imageRegistry",
		"runImagePullSecrets[0].name=Not_Valid": "/runImagePullSecrets/0/name",
	} {
		out, err := helmTemplate(t, set)
		if err == nil {
			t.Errorf("--set %s accepted", set)
			continue
		}
		if !strings.Contains(string(out), want) {
			t.Errorf("--set %s: error does not say %s:\n%s", set, want, out)
		}
	}
}
