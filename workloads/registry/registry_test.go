package registry

import (
	"encoding/json"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// Each tool is selected by its member of WorkloadSpec as the API spells it,
// and a spec that sets none or two selects nothing.
func TestEachToolIsSelectedByItsField(t *testing.T) {
	specOf := func(fields ...string) *benchv1.WorkloadSpec {
		doc := map[string]any{}
		for _, f := range fields {
			doc[f] = map[string]any{}
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		spec := &benchv1.WorkloadSpec{}
		if err := json.Unmarshal(raw, spec); err != nil {
			t.Fatal(err)
		}
		return spec
	}
	tools := Tools()
	if len(tools) != len(Names()) {
		t.Fatalf("%d tools, %d names", len(tools), len(Names()))
	}
	for _, tool := range tools {
		t.Run(tool.Field, func(t *testing.T) {
			got, err := For(specOf(tool.Field))
			if err != nil || got.Name() != tool.Workload.Name() {
				t.Fatalf("For(%s) = %v, %v; want %s", tool.Field, got, err, tool.Workload.Name())
			}
			if byName, err := ByName(tool.Workload.Name()); err != nil || byName != tool.Workload {
				t.Errorf("ByName(%s) = %v, %v", tool.Workload.Name(), byName, err)
			}
		})
	}
	if _, err := For(specOf()); err == nil {
		t.Error("a spec without a tool selected one")
	}
	if _, err := For(specOf(tools[0].Field, tools[1].Field)); err == nil {
		t.Error("a spec with two tools selected one")
	}
}
