package comparison

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// A comparison never compares nothing silently: what its patches make of
// each variant is checked before any run is created (the CRD's rules
// cannot look inside a patch, which is free-form JSON), and what its runs
// measured is checked before it says Compared.

// refusal is why a comparison cannot be made, with the Compared reason.
type refusal struct {
	reason, message string
}

func (r *refusal) Error() string { return r.message }

// stepPairs decides, from the variants' specs alone, which step of each
// candidate is compared with which step of the baseline: it refuses a
// variant that runs another tool, or whose steps cannot meet the
// baseline's by spec.stepPairing, naming the patched field.
func stepPairs(cmp *benchv1.BenchmarkComparison, specsByVariant map[string]benchv1.BenchmarkRunSpec) (map[string]map[string]string, *refusal) {
	baseSpec := specsByVariant[cmp.Spec.Baseline]
	if pairs, r := capacityPairs(cmp, specsByVariant); pairs != nil || r != nil {
		return pairs, r
	}
	baseTool, err := registry.For(&baseSpec.Workload)
	if err != nil {
		return nil, &refusal{benchv1.ReasonInvalidPatch, fmt.Sprintf("variant %s (the baseline): %v%s", cmp.Spec.Baseline, err, patchedFields(cmp, cmp.Spec.Baseline))}
	}
	baseSteps := stepNames(baseTool, &baseSpec)
	out := map[string]map[string]string{}
	for _, v := range cmp.Spec.Variants {
		if v.Name == cmp.Spec.Baseline {
			continue
		}
		spec := specsByVariant[v.Name]
		tool, err := registry.For(&spec.Workload)
		if err != nil {
			return nil, &refusal{benchv1.ReasonInvalidPatch, fmt.Sprintf("variant %s: %v%s", v.Name, err, patchedFields(cmp, v.Name))}
		}
		if tool.Name() != baseTool.Name() {
			return nil, &refusal{benchv1.ReasonNotComparable, fmt.Sprintf("variant %s runs %s and the baseline %s runs %s: a comparison compares one tool's load%s",
				v.Name, tool.Name(), cmp.Spec.Baseline, baseTool.Name(), patchedFields(cmp, v.Name, cmp.Spec.Baseline))}
		}
		pairs, err := compare.PairSteps(baseSteps, stepNames(tool, &spec), compare.StepPairing(stepPairing(cmp)))
		if err != nil {
			return nil, &refusal{benchv1.ReasonNotComparable, fmt.Sprintf("variant %s against the baseline %s: %v%s", v.Name, cmp.Spec.Baseline, err,
				patchedFields(cmp, v.Name, cmp.Spec.Baseline))}
		}
		out[v.Name] = pairs
	}
	return out, nil
}

// capacityPairs pairs capacity runs (spec.capacity) on what they found:
// the one step compare.CapacityStep. Every variant must then be a capacity
// run of the same load knob, or the Δ of the maximum would compare levels
// of different things; nil, nil when no variant is one.
func capacityPairs(cmp *benchv1.BenchmarkComparison, specsByVariant map[string]benchv1.BenchmarkRunSpec) (map[string]map[string]string, *refusal) {
	base := specsByVariant[cmp.Spec.Baseline].Capacity
	some := base != nil
	for _, v := range cmp.Spec.Variants {
		some = some || specsByVariant[v.Name].Capacity != nil
	}
	if !some {
		return nil, nil
	}
	out := map[string]map[string]string{}
	for _, v := range cmp.Spec.Variants {
		if v.Name == cmp.Spec.Baseline {
			continue
		}
		c := specsByVariant[v.Name].Capacity
		switch {
		case c == nil || base == nil:
			return nil, &refusal{benchv1.ReasonNotComparable, fmt.Sprintf("variant %s against the baseline %s: one is a capacity run (spec.capacity) and the other is not: a capacity compares with a capacity%s",
				v.Name, cmp.Spec.Baseline, patchedFields(cmp, v.Name, cmp.Spec.Baseline))}
		case c.Parameter != base.Parameter:
			return nil, &refusal{benchv1.ReasonNotComparable, fmt.Sprintf("variant %s searches capacity.parameter %s and the baseline %s %s: their maxima are levels of different knobs%s",
				v.Name, c.Parameter, cmp.Spec.Baseline, base.Parameter, patchedFields(cmp, v.Name, cmp.Spec.Baseline))}
		}
		out[v.Name] = map[string]string{compare.CapacityStep: compare.CapacityStep}
	}
	return out, nil
}

func stepPairing(cmp *benchv1.BenchmarkComparison) benchv1.StepPairing {
	if cmp.Spec.StepPairing == "" {
		return benchv1.StepPairingAuto
	}
	return cmp.Spec.StepPairing
}

func stepNames(w workloads.Workload, spec *benchv1.BenchmarkRunSpec) []string {
	var out []string
	for _, s := range w.Steps(&spec.Workload) {
		out = append(out, s.Name)
	}
	return out
}

// patchedFields names the workload fields the variants' patches set, as
// paths of the comparison: " (spec.variants[1].patch.workload.pgbench.clients)".
func patchedFields(cmp *benchv1.BenchmarkComparison, variants ...string) string {
	var fields []string
	for i, v := range cmp.Spec.Variants {
		if v.Patch == nil || !slices.Contains(variants, v.Name) {
			continue
		}
		paths, _ := compare.PatchPaths(v.Patch.Raw)
		for _, p := range paths {
			if strings.HasPrefix(p, "workload.") && !strings.HasPrefix(p, "workload.placement") && !strings.HasPrefix(p, "workload.resources") {
				fields = append(fields, fmt.Sprintf("spec.variants[%d].patch.%s", i, p))
			}
		}
	}
	if len(fields) == 0 {
		return ""
	}
	sort.Strings(fields)
	return " (" + strings.Join(fields, ", ") + ")"
}

// nothingCompared says why a report compared no metric: every measurement
// of a side excluded (how many, and why the first was), or no metric
// measured by both; "" when it compared something.
func nothingCompared(rep *compare.Report) string {
	if rep.Better+rep.Worse+rep.NoChange+rep.Inconclusive > 0 {
		return ""
	}
	for _, side := range []string{rep.Baseline, rep.Candidate} {
		excluded, why := 0, map[string]int{}
		first := ""
		for _, e := range rep.Excluded {
			if e.Side != side {
				continue
			}
			excluded++
			verdict := e.Verdict
			if e.Rejected != "" {
				verdict = "rejected"
			}
			why[verdict]++
			if first == "" {
				first = strings.Join(e.Reasons, "; ")
				if e.Rejected != "" {
					first = e.Rejected
				}
			}
		}
		if excluded > 0 && excluded == measurementsOf(rep, side)+excluded {
			var parts []string
			for _, k := range workloads.SortedKeys(why) {
				parts = append(parts, fmt.Sprintf("%d %s", why[k], k))
			}
			msg := fmt.Sprintf("every measurement of variant %s was excluded (%s)", side, strings.Join(parts, ", "))
			if first != "" {
				msg += ": " + first
			}
			return msg
		}
	}
	return fmt.Sprintf("no metric was measured by both %s and %s at a step they share", rep.Baseline, rep.Candidate)
}

// measurementsOf counts a side's measurements that were compared (not
// excluded): the largest sample of any of its rows.
func measurementsOf(rep *compare.Report, side string) int {
	n := 0
	for _, row := range rep.Rows {
		if side == rep.Baseline {
			n = max(n, row.Baseline.N)
		} else {
			n = max(n, row.Candidate.N)
		}
	}
	return n
}
