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

// A share per sender (memtier's rate per connection): each generator's
// senders together offer their generator's share to within half a sender
// each, and a sender is never told to offer nothing.
func TestForGeneratorSplitsARatePerSender(t *testing.T) {
	for _, c := range []struct {
		total, per int64
		n          int
		want       []int64
	}{
		{2000, 100, 1, []int64{20}},
		{2000, 100, 3, []int64{7, 7, 7}}, // shares 667, 667, 666
		{1049, 100, 1, []int64{10}},
		{1050, 100, 1, []int64{11}},
		{10, 100, 2, []int64{1, 1}}, // at least 1 each
		{1601, 1, 4, []int64{401, 400, 400, 400}},
	} {
		cmd := []string{"memtier_benchmark", "--rate-limiting", workloads.SharePerPlaceholder(c.total, c.per), "--test-time", "5"}
		var got []int64
		for i := range c.n {
			out := ForGenerator(cmd, i, c.n)
			v, err := strconv.ParseInt(out[2], 10, 64)
			if err != nil || out[4] != "5" {
				t.Fatalf("%d of %d: %q", i, c.n, out)
			}
			got = append(got, v)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%d/s over %d generators of %d senders: %v, want %v", c.total, c.n, c.per, got, c.want)
		}
	}
}
