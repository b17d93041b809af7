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
	if k.Duration == nil || k.Duration.Duration > 5*time.Second {
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
