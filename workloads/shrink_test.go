package workloads

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestShrinkHelpers(t *testing.T) {
	for name, c := range map[string]struct {
		in, want []int32
		most     int32
	}{
		"a long sweep keeps its ends, scaled": {in: []int32{10, 20, 40, 80}, most: 8, want: []int32{1, 8}},
		"values that would meet are dropped":  {in: []int32{30, 31}, most: 1, want: []int32{1}},
		"small enough already":                {in: []int32{1, 2}, most: 8, want: []int32{1, 2}},
		"one value scaled down":               {in: []int32{50}, most: 4, want: []int32{4}},
	} {
		t.Run(name, func(t *testing.T) {
			v := append([]int32(nil), c.in...)
			ShrinkSweep("x", &v)
			ShrinkScale("x", &v, c.most)
			if diff := cmp.Diff(c.want, v); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	d := metav1.Duration{Duration: time.Hour}
	if got := ShrinkDuration("d", &d, 5*time.Second); len(got) != 1 || d.Duration != 5*time.Second {
		t.Errorf("duration: %v %v", got, d)
	}
	var n int64
	if got := ShrinkCount("n", &n, 100, true); len(got) != 1 || n != 100 {
		t.Errorf("default count: %v %d", got, n)
	}
	n = 0
	if got := ShrinkCount("n", &n, 100, false); len(got) != 0 || n != 0 {
		t.Errorf("a default below the cap is kept: %v %d", got, n)
	}
}
