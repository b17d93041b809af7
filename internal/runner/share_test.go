package runner

import (
	"slices"
	"strconv"
	"testing"

	"github.com/dbperf-io/dbperf-operator/workloads"
)

// An offered rate split across a Job's load generators adds up to exactly
// the rate: the remainder is placed, never rounded away.
func TestForGeneratorSplitsARateExactly(t *testing.T) {
	for _, c := range []struct {
		total int64
		n     int
	}{{1600, 3}, {1601, 4}, {7, 8}, {1000, 1}, {999_999_999, 7}} {
		cmd := []string{"pgbench", "--rate", workloads.SharePlaceholder(c.total), "-c", "10"}
		var sum int64
		var shares []int64
		for i := range c.n {
			out := ForGenerator(cmd, i, c.n)
			v, err := strconv.ParseInt(out[2], 10, 64)
			if err != nil || out[0] != "pgbench" || out[4] != "10" {
				t.Fatalf("%d of %d: %q", i, c.n, out)
			}
			sum += v
			shares = append(shares, v)
		}
		if sum != c.total || slices.Max(shares)-slices.Min(shares) > 1 {
			t.Errorf("%d over %d generators: shares %v add up to %d", c.total, c.n, shares, sum)
		}
	}
}
