package resources

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkForgetRecordedMeasurements: what a measure reconcile spends
// dropping the kept reports of the measurements status records, with 400
// measurements' reports kept (200 runs × 2): by exact key (Forget) and by
// prefix scan (ForgetAll, as the measure phase did before).
func BenchmarkForgetRecordedMeasurements(b *testing.B) {
	fill := func() (*Meter, []string) {
		m := NewMeter(nil, 0, nil, 0)
		var keys []string
		for i := range 400 {
			k := fmt.Sprintf("ns/run-%03d/job-%d/", i/2, i%2)
			m.keep(k, nil)
			keys = append(keys, k)
		}
		return m, keys
	}
	ctx := context.Background()
	b.Run("exact", func(b *testing.B) {
		for b.Loop() {
			m, keys := fill()
			for _, k := range keys {
				m.Forget(ctx, k)
			}
		}
	})
	b.Run("prefix", func(b *testing.B) {
		for b.Loop() {
			m, keys := fill()
			for _, k := range keys {
				m.ForgetAll(ctx, k)
			}
		}
	})
}
