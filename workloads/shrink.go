package workloads

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// Shrinker is implemented by tools that can make a workload small enough to
// try a sample in a minute (`kubectl dbperf try`): shorter, with less data
// and at most two steps, the same load otherwise. Shrink changes the spec
// and says what it changed, one phrase each ("duration 10m → 5s").
type Shrinker interface {
	Shrink(spec *benchv1.WorkloadSpec) []string
}

// SmokeSteps is the most steps of a sweep a smoke form keeps.
const SmokeSteps = 2

// ShrinkSweep keeps the first and the last value of a swept list.
func ShrinkSweep(name string, values *[]int32) []string {
	v := *values
	if len(v) <= SmokeSteps {
		return nil
	}
	*values = []int32{v[0], v[len(v)-1]}
	return []string{fmt.Sprintf("%s %v → %v", name, v, *values)}
}

// ShrinkDuration caps a duration at most; a zero one is left alone.
func ShrinkDuration(name string, d *metav1.Duration, most time.Duration) []string {
	if d == nil || d.Duration <= most {
		return nil
	}
	was := d.Duration
	d.Duration = most
	return []string{fmt.Sprintf("%s %s → %s", name, was, most)}
}

// ShrinkCount caps a count at most; a zero (default) one is set to most
// when defaultAbove says the tool's default is larger.
func ShrinkCount[T int32 | int64](name string, n *T, most T, defaultAbove bool) []string {
	switch {
	case *n > most:
		was := *n
		*n = most
		return []string{fmt.Sprintf("%s %d → %d", name, was, most)}
	case *n == 0 && defaultAbove:
		*n = most
		return []string{fmt.Sprintf("%s (the tool's default) → %d", name, most)}
	}
	return nil
}

// ShrinkScale scales a swept list down so that its largest value is most,
// keeping the steps apart (values that would meet are dropped).
func ShrinkScale(name string, values *[]int32, most int32) []string {
	v := *values
	top := int32(0)
	for _, x := range v {
		top = max(top, x)
	}
	if top <= most {
		return nil
	}
	var out []int32
	for _, x := range v {
		y := max(1, int32(int64(x)*int64(most)/int64(top)))
		if len(out) == 0 || !contains(out, y) {
			out = append(out, y)
		}
	}
	*values = out
	return []string{fmt.Sprintf("%s %v → %v", name, v, out)}
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
