package results

import (
	"strings"
	"testing"
	"time"
)

func series(key string, vals ...float64) []Point {
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
			TimeSeries: series("transactionsPerSecond", 5000, 5100, 4900, 5050, 4950)}},
		"three seconds at zero in the middle": {r: &Result{Primary: Key{Name: "transactionsPerSecond"},
			TimeSeries: series("transactionsPerSecond", 5000, 5100, 0, 0, 0, 4900, 5050)},
			want: []Stall{{From: 2 * time.Second, To: 5 * time.Second, Lowest: 0, Median: 4900, Series: "transactionsPerSecond"}}},
		"a dip and a stall": {r: &Result{Primary: Key{Name: "opsPerSecond", Operation: "Totals"},
			TimeSeries: series("opsPerSecond", 100, 5, 100, 100, 3, 2, 100)},
			want: []Stall{{From: 1 * time.Second, To: 2 * time.Second, Lowest: 5, Median: 100, Series: "opsPerSecond"},
				{From: 4 * time.Second, To: 6 * time.Second, Lowest: 2, Median: 100, Series: "opsPerSecond"}}},
		"HammerDB's transaction counter names no primary": {r: &Result{Primary: Key{Name: "nopm"},
			TimeSeries: series("tpm", 60000, 0, 61000, 59000)},
			want: []Stall{{From: 1 * time.Second, To: 2 * time.Second, Lowest: 0, Median: 59500, Series: "tpm"}}},
		"too short to say": {r: &Result{Primary: Key{Name: "opsPerSecond"}, TimeSeries: series("opsPerSecond", 100, 0)}},
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

func TestJudgeStalls(t *testing.T) {
	mk := func() *Result {
		r := New("pgbench")
		r.Primary = Key{Name: "transactionsPerSecond"}
		r.TimeSeries = series("transactionsPerSecond", 5000, 5100, 0, 0, 0, 4900, 5050)
		return r
	}
	warned := mk()
	JudgeStalls(warned, 0, 0)
	if warned.Verdict != Succeeded || len(warned.Warnings) != 1 || !strings.Contains(warned.Warnings[0], "stalled from 2s to 5s") {
		t.Errorf("without maxStall: %s %q %q", warned.Verdict, warned.Reasons, warned.Warnings)
	}
	invalid := mk()
	JudgeStalls(invalid, 0, 2*time.Second)
	if invalid.Verdict != Invalid || !strings.Contains(invalid.Reasons[0], "(3s; lowest 0") || !strings.Contains(invalid.Reasons[0], "validity.maxStall 2s") {
		t.Errorf("past maxStall: %s %q", invalid.Verdict, invalid.Reasons)
	}
	tolerated := mk()
	JudgeStalls(tolerated, 0, 5*time.Second)
	if tolerated.Verdict != Succeeded {
		t.Errorf("a 3 s stall under a 5 s maxStall: %s %q", tolerated.Verdict, tolerated.Reasons)
	}
}
