package results

import (
	"strings"
	"testing"
	"time"
)

func perSecond(key string, vals ...float64) []Point {
	var out []Point
	for i, v := range vals {
		out = append(out, Point{ElapsedSeconds: float64(i + 1), Values: map[string]float64{key: v}})
	}
	return out
}

func TestStalls(t *testing.T) {
	cases := map[string]struct {
		r    *Result
		want []Stall
	}{
		"steady": {r: &Result{Primary: Key{Name: "transactionsPerSecond"},
			TimeSeries: perSecond("transactionsPerSecond", 5000, 5100, 4900, 5050, 4950)}},
		"three seconds at zero in the middle": {r: &Result{Primary: Key{Name: "transactionsPerSecond"},
			TimeSeries: perSecond("transactionsPerSecond", 5000, 5100, 0, 0, 0, 4900, 5050)},
			want: []Stall{{From: 2 * time.Second, To: 5 * time.Second, Lowest: 0, Level: 4900, Series: "transactionsPerSecond"}}},
		"a dip and a stall": {r: &Result{Primary: Key{Name: "opsPerSecond", Operation: "Totals"},
			TimeSeries: perSecond("opsPerSecond", 100, 5, 100, 100, 3, 2, 100)},
			want: []Stall{{From: 1 * time.Second, To: 2 * time.Second, Lowest: 5, Level: 100, Series: "opsPerSecond"},
				{From: 4 * time.Second, To: 6 * time.Second, Lowest: 2, Level: 100, Series: "opsPerSecond"}}},
		"HammerDB's transaction counter names no primary": {r: &Result{Primary: Key{Name: "nopm"},
			TimeSeries: perSecond("tpm", 60000, 0, 61000, 59000)},
			want: []Stall{{From: 1 * time.Second, To: 2 * time.Second, Lowest: 0, Level: 59500, Series: "tpm"}}},
		"a point at the start measures no time": {r: &Result{Primary: Key{Name: "nopm"},
			TimeSeries: append([]Point{{ElapsedSeconds: 0, Values: map[string]float64{"tpm": 0}}}, perSecond("tpm", 60000, 61000, 59000)...)}},
		"too short to say": {r: &Result{Primary: Key{Name: "opsPerSecond"}, TimeSeries: perSecond("opsPerSecond", 100, 0)}},
		"no series":        {r: &Result{Primary: Key{Name: "opsPerSecond"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Stalls(tc.r, DefaultStallPercent)
			if len(got) != len(tc.want) {
				t.Fatalf("stalls %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("stall %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestStallsJudged(t *testing.T) {
	mk := func() *Result {
		r := New("pgbench")
		r.Primary = Key{Name: "transactionsPerSecond"}
		r.TimeSeries = perSecond("transactionsPerSecond", 5000, 5100, 0, 0, 0, 4900, 5050)
		return r
	}
	warned := mk()
	judgeStability(warned, Thresholds{})
	if warned.Verdict != Succeeded || len(warned.Warnings) != 1 || !strings.Contains(warned.Warnings[0], "stalled from 2s to 5s") {
		t.Errorf("without maxStall: %s %q %q", warned.Verdict, warned.Reasons, warned.Warnings)
	}
	invalid := mk()
	judgeStability(invalid, Thresholds{MaxStall: 2 * time.Second})
	if invalid.Verdict != Invalid || !strings.Contains(invalid.Reasons[0], "(3s; lowest 0") || !strings.Contains(invalid.Reasons[0], "validity.maxStall 2s") {
		t.Errorf("past maxStall: %s %q", invalid.Verdict, invalid.Reasons)
	}
	tolerated := mk()
	judgeStability(tolerated, Thresholds{MaxStall: 5 * time.Second})
	if tolerated.Verdict != Succeeded {
		t.Errorf("a 3 s stall under a 5 s maxStall: %s %q", tolerated.Verdict, tolerated.Reasons)
	}
}
