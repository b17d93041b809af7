package controllers

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// A run of an interleaved comparison that fails (its load generator never
// starts, the run times out) does not stop the comparison: the next run
// starts, and the comparison ends saying what it could compare.
func TestComparisonGoesOnPastAFailedRun(t *testing.T) {
	h := newHarness(t)
	cmp := kit.Comparison("past-failed", benchv1.OrderInterleaved, 1)
	cmp.Spec.Template.Timeout = &metav1.Duration{Duration: 3 * time.Second}
	cmp.Spec.Variants = append(cmp.Spec.Variants, benchv1.Variant{Name: "v4b", Patch: kit.PoolPatch("standard-v4a")})
	h.Create(cmp)
	testutil.Eventually(t, 30*time.Second, "every run of the comparison created and ended", func() error {
		var runs benchv1.BenchmarkRunList
		if err := k8s.List(context.Background(), &runs, client.InNamespace(h.NS)); err != nil {
			return err
		}
		ended := 0
		for _, r := range runs.Items {
			if r.Status.Phase.Terminal() {
				ended++
			}
		}
		if len(runs.Items) != 3 || ended != 3 {
			return fmt.Errorf("%d runs, %d ended", len(runs.Items), ended)
		}
		return nil
	})
	h.WaitComparison("past-failed", benchv1.ComparisonFailed)
}
