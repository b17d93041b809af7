package pod

import (
	"os"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The API's defaults of what the runner does are the runner's: a run that
// says nothing gets from the schema what a command line that says nothing
// gets from the runner. The schema's markers must be literals, so this
// holds them to the constants.
func TestAPIDefaultsAreTheRunners(t *testing.T) {
	raw, err := os.ReadFile("../../config/crd/bases/bench.dbperf.io_benchmarkruns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	duration := func(s string) any {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for path, want := range map[string]any{
		"telemetry.pollInterval":              DefaultPollInterval,
		"validity.maxLoadGeneratorCPUPercent": float64(DefaultMaxLoadGeneratorCPUPercent),
		"workload.queryBench.runsPerQuery":    float64(DefaultRunsPerQuery),
		"workload.queryBench.queryTimeout":    DefaultQueryTimeout,
	} {
		prop := spec
		for _, name := range strings.Split(path, ".") {
			prop = prop.Properties[name]
		}
		if prop.Default == nil {
			t.Errorf("spec.%s has no default in the schema", path)
			continue
		}
		var got any
		if err := yaml.Unmarshal(prop.Default.Raw, &got); err != nil {
			t.Fatal(err)
		}
		if s, ok := got.(string); ok {
			got = duration(s)
		}
		if got != want {
			t.Errorf("spec.%s defaults to %v in the schema, the runner to %v", path, got, want)
		}
	}
}
