package custom

import (
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// FuzzParse feeds each format's parser arbitrary results, seeded with good
// ones: it must never panic, never call a result it could not read a
// success without saying why, and never succeed without its primary
// metric. `go test -fuzz FuzzParse ./workloads/custom` explores further.
func FuzzParse(f *testing.F) {
	f.Add([]byte(LinesHeader + "\nmetric x - 1 ops/s HigherIsBetter\nhistogram GET us HISTFAAAACF42pNpmSzMwMDAzAABzFCaEURcm7yEwf4DRAOA8P9NZfqapHEyAAAAA//+J0gbt\nprogress 1 x 5\n"))
	f.Add([]byte(goodExposition))
	f.Add([]byte("# TYPE x gauge\n# UNIT x seconds\nx{operation=\"a\"} 1\n# TYPE d_seconds histogram\nd_seconds_bucket{le=\"1\"} 1\nd_seconds_bucket{le=\"+Inf\"} 1\nd_seconds_count 1\nd_seconds_sum 1\n# EOF\n"))
	f.Add([]byte(`{"schemaVersion": 1, "metrics": [{"name": "x", "value": 1, "unit": "ops/s"}], "histograms": {"a": "SElTVEZBQUFBQzU0MnBKcG1Tek13TURBeVFBQnpGQ2FFVVJjbTd5RXdmNERST0E4UDlOWmZxYXBIRXlBQUFBQS8vK0owZ2J0"}}`))
	formats := []benchv1.CustomResultFormat{benchv1.CustomLines, benchv1.CustomOpenMetrics, benchv1.CustomResultJSON}
	f.Fuzz(func(t *testing.T, out []byte) {
		for _, format := range formats {
			for _, file := range []string{"", "results"} {
				in := workloads.ParseInput{Output: out, Files: map[string][]byte{"results": out},
					Config: config(t, format, results.Key{Name: "x"}, file)}
				r := Custom{}.Parse(in)
				if r.Verdict != results.Succeeded && len(r.Reasons) == 0 {
					t.Fatalf("%s: a %s result without a reason", format, r.Verdict)
				}
				if _, ok := r.Get(r.Primary); r.Verdict == results.Succeeded && !ok {
					t.Fatalf("%s: a successful result without its primary metric", format)
				}
			}
		}
	})
}
