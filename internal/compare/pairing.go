package compare

import (
	"fmt"
	"slices"
	"strings"
)

// StepPairing says which step of a candidate is compared with which step
// of the baseline (the API's BenchmarkComparison.spec.stepPairing).
type StepPairing string

const (
	// PairAuto pairs by name when the sides measure the same steps; when
	// each side measures a single step of another name (the variant is the
	// parameter: clients 1 against 4), that step with that step; otherwise
	// it refuses.
	PairAuto StepPairing = "Auto"
	// PairByName compares steps of the same name only; it refuses sides
	// with no step in common.
	PairByName StepPairing = "ByName"
	// PairByPosition compares the i-th step of each side; it refuses sides
	// with different numbers of steps.
	PairByPosition StepPairing = "ByPosition"
)

// PairSteps maps each of the candidate's steps to the baseline's step it is
// compared with; steps of the same name on both sides map to themselves.
// The error says why nothing can be compared.
func PairSteps(baseline, candidate []string, mode StepPairing) (map[string]string, error) {
	common := map[string]string{}
	for _, s := range candidate {
		if slices.Contains(baseline, s) {
			common[s] = s
		}
	}
	switch mode {
	case PairByPosition:
		if len(baseline) != len(candidate) {
			return nil, fmt.Errorf("stepPairing ByPosition needs as many steps on both sides: the baseline measures %d (%s), the candidate %d (%s)",
				len(baseline), list(baseline), len(candidate), list(candidate))
		}
		out := map[string]string{}
		for i, s := range candidate {
			out[s] = baseline[i]
		}
		return out, nil
	case PairByName:
		if len(common) == 0 {
			return nil, noStepInCommon(baseline, candidate, "")
		}
		return common, nil
	}
	switch {
	case len(common) == len(baseline) && len(common) == len(candidate):
		return common, nil
	case len(baseline) == 1 && len(candidate) == 1:
		return map[string]string{candidate[0]: baseline[0]}, nil
	case len(common) == 0:
		return nil, noStepInCommon(baseline, candidate, "; set spec.stepPairing to ByPosition to compare the i-th step of each")
	}
	return nil, fmt.Errorf("the sides measure different sweeps: the baseline %s, the candidate %s; set spec.stepPairing to ByName to compare the %d steps in common (%s) or ByPosition to compare the i-th step of each",
		list(baseline), list(candidate), len(common), list(keys(common)))
}

func noStepInCommon(baseline, candidate []string, hint string) error {
	return fmt.Errorf("no step in common: the baseline measures %s, the candidate %s%s", list(baseline), list(candidate), hint)
}

func list(s []string) string {
	if len(s) == 0 {
		return "no step"
	}
	return strings.Join(s, ", ")
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// StepLabel names a row's step: the baseline's, and the candidate's when
// they were paired across names ("clients=1 vs clients=4").
func (r Row) StepLabel() string {
	if r.CandidateStep != "" && r.CandidateStep != r.Step {
		return r.Step + " vs " + r.CandidateStep
	}
	return r.Step
}
