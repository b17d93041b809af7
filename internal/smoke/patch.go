package smoke

import (
	"encoding/json"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// shrinkPatch shrinks the workload fields a variant's merge patch sets: the
// patched spec is shrunk like the template, and each workload field the
// patch names takes its shrunk value.
func shrinkPatch(template benchv1.BenchmarkRunSpec, v *benchv1.Variant) ([]string, error) {
	if v.Patch == nil || len(v.Patch.Raw) == 0 {
		return nil, nil
	}
	var patch map[string]any
	if err := json.Unmarshal(v.Patch.Raw, &patch); err != nil {
		return nil, fmt.Errorf("variant %s: patch: %w", v.Name, err)
	}
	pw, ok := patch["workload"].(map[string]any)
	if !ok {
		return nil, nil
	}
	base, err := json.Marshal(template)
	if err != nil {
		return nil, err
	}
	merged, err := jsonpatch.MergePatch(base, v.Patch.Raw)
	if err != nil {
		return nil, fmt.Errorf("variant %s: patch: %w", v.Name, err)
	}
	var spec benchv1.BenchmarkRunSpec
	if err := json.Unmarshal(merged, &spec); err != nil {
		return nil, fmt.Errorf("variant %s: %w", v.Name, err)
	}
	changes, err := RunSpec(&spec)
	if err != nil {
		return nil, fmt.Errorf("variant %s: %w", v.Name, err)
	}
	raw, err := json.Marshal(spec.Workload)
	if err != nil {
		return nil, err
	}
	var shrunk map[string]any
	if err := json.Unmarshal(raw, &shrunk); err != nil {
		return nil, err
	}
	// Only what the patch sets: a tool's block, field by field.
	changedAny := false
	for tool, fields := range pw {
		pf, ok := fields.(map[string]any)
		sf, ok2 := shrunk[tool].(map[string]any)
		if !ok || !ok2 {
			continue
		}
		for k := range pf {
			if sv, ok := sf[k]; ok && fmt.Sprint(sv) != fmt.Sprint(pf[k]) {
				pf[k] = sv
				changedAny = true
			}
		}
	}
	if !changedAny {
		return nil, nil
	}
	out, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	v.Patch.Raw = out
	var said []string
	for _, c := range changes {
		said = append(said, "variant "+v.Name+": "+c)
	}
	return said, nil
}
