package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const root = "../.."

func TestTheComponentsAreCurrent(t *testing.T) {
	selectors, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(selectors) < 20 {
		t.Fatalf("found %d nodeSelectors with %q in the samples: is Find reading them?", len(selectors), SampleKey)
	}
	for _, c := range Clouds {
		path := filepath.Join(root, ComponentsDir, c.Name, "kustomization.yaml")
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, Component(selectors, c.Key)) {
			t.Errorf("%s is not what the samples give: run `make manifests` (go run ./hack/poollabel)", path)
		}
	}
}

func TestEscapeIsRFC6901(t *testing.T) {
	for in, want := range map[string]string{
		"pool":                          "pool",
		"cloud.google.com/gke-nodepool": "cloud.google.com~1gke-nodepool",
		"a~b/c":                         "a~0b~1c",
	} {
		if got := escape(in); got != want {
			t.Errorf("escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// Rendered by kubectl's kustomize, as a user would: every sample with each
// component keeps its pool names under the cloud's key and no nodeSelector
// names SampleKey any more.
func TestKustomizeRendersTheSamplesWithTheCloudsKey(t *testing.T) {
	kubectl := kubectlPath(t)
	plain := render(t, kubectl, "")
	before := poolsByKey(t, plain)[SampleKey]
	if len(before) == 0 {
		t.Fatalf("the samples rendered without a component name no pool by %q", SampleKey)
	}
	for _, c := range Clouds {
		got := poolsByKey(t, render(t, kubectl, c.Name))
		if n := len(got[SampleKey]); n != 0 {
			t.Errorf("with pool-label/%s, %d nodeSelectors still name %q", c.Name, n, SampleKey)
		}
		if strings.Join(got[c.Key], ",") != strings.Join(before, ",") {
			t.Errorf("with pool-label/%s, the pools under %s are %v, the samples' %v", c.Name, c.Key, got[c.Key], before)
		}
	}
}

// kubectlPath is $KUBECTL, else the kubectl of the control plane envtest
// uses, else the test is skipped.
func kubectlPath(t *testing.T) string {
	t.Helper()
	if k := os.Getenv("KUBECTL"); k != "" {
		return k
	}
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "kubectl")); err == nil {
			return filepath.Join(dir, "kubectl")
		}
	}
	t.Skip("no kubectl: set KUBECTL or KUBEBUILDER_ASSETS (hack/build-control-plane.sh)")
	return ""
}

// render runs kubectl kustomize over an overlay of every sample directory,
// with config/samples/pool-label/<component> when given.
func render(t *testing.T, kubectl, component string) []byte {
	t.Helper()
	dir := t.TempDir()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	// kustomize takes directories by relative paths only.
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		t.Fatal(err)
	}
	k := "resources:\n- " + rel + "/config/samples\n- " + rel + "/config/samples/published\n"
	if component != "" {
		k += "components:\n- " + rel + "/" + ComponentsDir + "/" + component + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize (component %q): %v\n%s", component, err, stderr.String())
	}
	return out
}

// poolsByKey lists the values of every nodeSelector of the rendered
// objects by label key, in the order met.
func poolsByKey(t *testing.T, rendered []byte) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, doc := range bytes.Split(rendered, []byte("\n---\n")) {
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatal(err)
		}
		collect(obj, out)
	}
	return out
}

func collect(v any, out map[string][]string) {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			if sel, ok := t[k].(map[string]any); ok && k == "nodeSelector" {
				for _, key := range sortedKeys(sel) {
					out[key] = append(out[key], sel[key].(string))
				}
				continue
			}
			collect(t[k], out)
		}
	case []any:
		for _, e := range t {
			collect(e, out)
		}
	}
}
