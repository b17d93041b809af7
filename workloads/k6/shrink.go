package k6

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Shrink keeps a k6 script: 5 s, two VU counts at most. A script whose
// own options set stages or iterations keeps them (k6 takes --duration
// over the script's duration only).
func (K6) Shrink(spec *benchv1.WorkloadSpec) []string {
	k := spec.K6
	var out []string
	if len(k.Stages) > 0 {
		// The ramp's shape in 2-s stages, at most 10 VUs.
		top := int32(0)
		for _, st := range k.Stages {
			top = max(top, st.Target)
		}
		for i := range k.Stages {
			k.Stages[i].Duration = metav1.Duration{Duration: 2 * time.Second}
			if top > 10 {
				k.Stages[i].Target = int32(int64(k.Stages[i].Target) * 10 / int64(top))
			}
		}
		out = append(out, "k6.stages → 2s each, at most 10 VUs")
	} else if k.Duration == nil || k.Duration.Duration > 5*time.Second {
		out = append(out, "k6.duration → 5s")
		k.Duration = &metav1.Duration{Duration: 5 * time.Second}
	}
	out = append(out, workloads.ShrinkSweep("k6.vus", &k.VUs)...)
	out = append(out, workloads.ShrinkScale("k6.vus", &k.VUs, 10)...)
	if !slices.Contains(k.Args, "--no-thresholds") {
		// A smoke run checks that the sample works, not its numbers: the
		// script's thresholds (its validity) are judged on real runs.
		k.Args = append(k.Args, "--no-thresholds")
		out = append(out, "thresholds off (--no-thresholds)")
	}
	return out
}
