package arch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Every int32 field of the CRDs' specs has a maximum (or an enum): the API
// server admits any JSON number a schema leaves unbounded, and a value
// past 2³¹ − 1 then cannot be read into the Go type — every list of the
// kind fails to decode, and the operator stops seeing all its objects. The
// fuzz test found spec.workload.pgbench.rateLimitPerSecond = 2147483648 so.
// Kubernetes' own affinity inside ours carries int32 weights the embedded
// type leaves unbounded (the fuzz test stored 2147483648 there too): the
// object holding an affinity checks its three kinds of preferred terms'
// weights with a CEL rule (1–100, the scheduler's range).
func TestEveryInt32FieldIsBounded(t *testing.T) {
	files, err := filepath.Glob("../../config/crd/bases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			t.Fatal(err)
		}
		for _, v := range crd.Spec.Versions {
			spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
			var walk func(s apiextensionsv1.JSONSchemaProps, path string)
			walk = func(s apiextensionsv1.JSONSchemaProps, path string) {
				if _, ok := s.Properties["affinity"]; ok {
					for _, kind := range []string{"nodeAffinity", "podAffinity", "podAntiAffinity"} {
						want := "self.affinity." + kind + ".preferredDuringSchedulingIgnoredDuringExecution.all(p, p.weight >= 1 && p.weight <= 100)"
						found := false
						for _, r := range s.XValidations {
							found = found || strings.Contains(r.Rule, want)
						}
						if !found {
							t.Errorf("%s: %s.affinity's %s weights are not checked (no rule %q)", filepath.Base(f), path, kind, want)
						}
					}
				}
				if strings.HasSuffix(path, ".affinity") {
					return
				}
				if s.Format == "int32" && s.Maximum == nil && len(s.Enum) == 0 {
					t.Errorf("%s: %s is an int32 without a maximum", filepath.Base(f), path)
				}
				for name, p := range s.Properties {
					walk(p, path+"."+name)
				}
				if s.Items != nil && s.Items.Schema != nil {
					walk(*s.Items.Schema, path+"[]")
				}
				if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
					walk(*s.AdditionalProperties.Schema, path+"{}")
				}
			}
			walk(spec, "spec")
		}
	}
}
