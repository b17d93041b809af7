package specs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

func TestStabilityArgs(t *testing.T) {
	cases := map[string]struct {
		warmup   *metav1.Duration
		validity benchv1.ValiditySpec
		want     []string
	}{
		"unset: the runner's defaults": {},
		"every field": {
			warmup: &metav1.Duration{Duration: 30 * time.Second},
			validity: benchv1.ValiditySpec{StallPercent: 5, MaxStall: &metav1.Duration{Duration: 2 * time.Second},
				DipPercent: 40, MaxDip: &metav1.Duration{Duration: 5 * time.Second}, MaxDriftPercent: 12.5},
			want: []string{"--warmup", "30s", "--stall-percent", "5", "--max-stall", "2s",
				"--dip-percent", "40", "--max-dip", "5s", "--max-drift-percent", "12.5"},
		},
		"a zero warm-up is none": {warmup: &metav1.Duration{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			run := sampleRun()
			run.Spec.Workload.Warmup, run.Spec.Validity = tc.warmup, tc.validity
			if diff := cmp.Diff(tc.want, pod.ExecCommand{Stability: stability(run)}.Flags()); diff != "" {
				t.Errorf("arguments (-want +got):\n%s", diff)
			}
		})
	}
}
