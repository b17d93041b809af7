package kubelet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

func TestWithin(t *testing.T) {
	at := func(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }
	// Rounds every 10 s from t0 on two nodes, the second node's read a
	// little later in each round.
	var polls []Poll
	for r := range 8 {
		polls = append(polls, Poll{Round: r, Node: "a", At: at(float64(10 * r))}, Poll{Round: r, Node: "b", At: at(float64(10*r) + 0.3)})
	}
	rounds := func(ps []Poll) []int {
		var out []int
		for _, p := range ps {
			if p.Node == "a" {
				out = append(out, p.Round)
			}
		}
		return out
	}
	for name, tc := range map[string]struct {
		start, end float64
		want       []int
	}{
		"the rounds inside a long window":          {start: 13, end: 52, want: []int{2, 3, 4, 5}},
		"a round exactly at each end is inside":    {start: 20, end: 40, want: []int{2, 3, 4}},
		"a short window: the rounds bracketing it": {start: 13, end: 25, want: []int{1, 2, 3}},
		"a window past the last round":             {start: 65, end: 90, want: []int{6, 7}},
		"no window: every round":                   {want: []int{0, 1, 2, 3, 4, 5, 6, 7}},
	} {
		t.Run(name, func(t *testing.T) {
			w := telemetry.Window{}
			if tc.end > 0 {
				w = telemetry.Window{Start: at(tc.start), End: at(tc.end)}
			}
			if d := cmp.Diff(tc.want, rounds(Within(polls, w))); d != "" {
				t.Errorf("rounds (-want +got):\n%s", d)
			}
		})
	}
}
