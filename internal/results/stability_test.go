package results

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// noisy is a pgbench-like 1 s progress series of n points around level,
// with ±spread % uniform noise (seeded: the same series every run), shaped
// by f(second) as a factor of the level.
func noisy(n int, level, spread float64, f func(s int) float64) []Point {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = level * f(i+1) * (1 + spread/100*(2*rng.Float64()-1))
	}
	return perSecond("transactionsPerSecond", vals...)
}

func flat(int) float64 { return 1 }

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func everyTenSeconds(key string, vals ...float64) []Point {
	pts := perSecond(key, vals...)
	for i := range pts {
		pts[i].ElapsedSeconds *= 10
	}
	return pts
}

func pgbenchResult(ts []Point) *Result {
	r := New("pgbench")
	r.Primary = Key{Name: "transactionsPerSecond"}
	r.Add(Metric{Name: "transactionsPerSecond", Value: 5000, Unit: "tx/s", Direction: HigherIsBetter})
	r.Add(Metric{Name: "latencyAverageMillis", Value: 0.4, Unit: "ms", Direction: LowerIsBetter})
	r.TimeSeries = ts
	return r
}

func TestStability(t *testing.T) {
	slowStart := func(s int) float64 { return min(float64(s)/4, 1) } // 25, 50, 75 % then full
	cases := map[string]struct {
		series []Point
		th     Thresholds
		// verdict, and what the reasons and the warnings say, in order
		verdict  Verdict
		reasons  []string
		warnings []string
		// steady is the steady-state throughput expected beside the primary (0: none)
		steady float64
	}{
		"a flat noisy series: nothing": {
			series: noisy(60, 5000, 5, flat), th: Thresholds{MaxDip: time.Second, MaxStall: time.Second, MaxDriftPercent: 5},
			verdict: Succeeded,
		},
		"a slow start is a dip without a warm-up": {
			series: noisy(30, 5000, 2, slowStart), th: Thresholds{MaxDip: time.Second},
			verdict: Invalid, reasons: []string{"transactionsPerSecond dipped from 0s to 2s into the measurement (2s at 3", "below validity.dipPercent 50% of its median, longer than validity.maxDip 1s"},
			warnings: []string{"transactionsPerSecond drifted by +"},
		},
		"a slow start is left out by the warm-up": {
			series: noisy(30, 5000, 2, slowStart), th: Thresholds{MaxDip: time.Second, Warmup: 3 * time.Second},
			verdict: Succeeded, steady: 5000,
		},
		"a dip to 30 % for 5 s, longer than maxDip 3s": {
			series:  noisy(30, 5000, 3, func(s int) float64 { return map[bool]float64{true: 0.3, false: 1}[s > 10 && s <= 15] }),
			th:      Thresholds{MaxDip: 3 * time.Second, MaxStall: time.Second},
			verdict: Invalid, reasons: []string{"transactionsPerSecond dipped from 10s to 15s into the measurement (5s at 30% of its median", "longer than validity.maxDip 3s"},
		},
		"a 30 % drop for 5 s under dipPercent 80": {
			series:  noisy(30, 5000, 3, func(s int) float64 { return map[bool]float64{true: 0.7, false: 1}[s > 10 && s <= 15] }),
			th:      Thresholds{DipPercent: 80, MaxDip: 3 * time.Second},
			verdict: Invalid, reasons: []string{"dipped from 10s to 15s into the measurement (5s at 70% of its median", "below validity.dipPercent 80%", "longer than validity.maxDip 3s"},
		},
		"a short dip is a warning": {
			series:  noisy(30, 5000, 3, func(s int) float64 { return map[bool]float64{true: 0.3, false: 1}[s == 20] }),
			th:      Thresholds{MaxDip: 3 * time.Second},
			verdict: Succeeded, warnings: []string{"dipped from 19s to 20s into the measurement (1s at 3", "below validity.dipPercent 50% of its median"},
		},
		"a stall is not a dip as well": {
			series:  noisy(30, 5000, 3, func(s int) float64 { return map[bool]float64{true: 0, false: 1}[s > 10 && s <= 13] }),
			th:      Thresholds{MaxDip: time.Second},
			verdict: Succeeded, warnings: []string{"stalled from 10s to 13s into the measurement (3s; lowest 0"},
		},
		"a dip around a stall is both": {
			series:  noisy(30, 5000, 3, func(s int) float64 { return []float64{1, 0.3, 0, 0.3, 1}[min(max(s-10, 0), 4)] }),
			th:      Thresholds{MaxStall: 2 * time.Second},
			verdict: Succeeded, warnings: []string{"stalled from 11s to 12s", "dipped from 10s to 13s"},
		},
		"a steady 20 % drift is flagged": {
			series:  noisy(60, 5000, 3, func(s int) float64 { return 0.9 + 0.2*float64(s)/60 }),
			verdict: Succeeded, warnings: []string{"transactionsPerSecond drifted by +", "% of its mean from 0s to 1m0s into the measurement (least-squares slope, 95% CI +", "58 df, p < 1e-06)"},
		},
		"a 20 % drift past maxDriftPercent 10": {
			series:  noisy(60, 5000, 3, func(s int) float64 { return 1.1 - 0.2*float64(s)/60 }),
			th:      Thresholds{MaxDriftPercent: 10},
			verdict: Invalid, reasons: []string{"drifted by -2", "above validity.maxDriftPercent 10"},
		},
		"a run stalled 60 % of the time is judged against its mean": {
			series:  perSecond("transactionsPerSecond", 5000, 5000, 5000, 5000, 0, 0, 0, 0, 0, 0, 5000, 5000, 5000, 5000, 0, 0, 0, 0, 0, 0),
			th:      Thresholds{MaxStall: 2 * time.Second},
			verdict: Invalid, reasons: []string{"stalled from 4s to 10s into the measurement (6s; lowest 0, mean 2000): below 10% of its time-weighted mean (its median is 0), longer than validity.maxStall 2s",
				"stalled from 14s to 20s"},
		},
		"a steady 0.5 events a second is too sparse to judge": {
			series:  perSecond("requestsPerSecond", 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1),
			th:      Thresholds{MaxStall: time.Second, MaxDip: time.Second, MaxDriftPercent: 1},
			verdict: Succeeded, warnings: []string{"requestsPerSecond: too few events per interval to judge stalls, dips or drift: mean 0.5 per interval of 1s, below 20; lengthen the interval"},
		},
		"19.3 events an interval are too few to judge": {
			series:  perSecond("requestsPerSecond", append(repeat(20, 15), append([]float64{0}, repeat(20, 14)...)...)...),
			th:      Thresholds{MaxStall: time.Second},
			verdict: Succeeded, warnings: []string{"too few events per interval to judge stalls, dips or drift: mean 19.3 per interval of 1s"},
		},
		"20.3 events an interval are enough": {
			series:  perSecond("requestsPerSecond", append(repeat(21, 15), append([]float64{0}, repeat(21, 14)...)...)...),
			th:      Thresholds{MaxStall: time.Second},
			verdict: Succeeded, warnings: []string{"requestsPerSecond stalled from 15s to 16s into the measurement (1s; lowest 0, median 21): below 10% of its median"},
		},
		"per-minute rates every 10 s count as more events than they are": {
			series:  everyTenSeconds("tpm", 180, 180, 180, 0, 180, 180, 180),
			th:      Thresholds{MaxStall: 5 * time.Second},
			verdict: Invalid, reasons: []string{"tpm stalled from 30s to 40s"},
		},
		"a warm-up longer than the series": {
			series: noisy(10, 5000, 3, flat), th: Thresholds{Warmup: 30 * time.Second},
			verdict: Succeeded, warnings: []string{"the warm-up of 30s leaves 0 of the 10 intervals of the progress series, which ends 10s into the measurement"},
		},
		"a warm-up without a series": {
			th:      Thresholds{Warmup: 30 * time.Second},
			verdict: Succeeded, warnings: []string{"workload.warmup is set, but the tool reported no progress series"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := pgbenchResult(tc.series)
			ApplyThresholds(r, tc.th)
			t.Logf("%s %q %q", r.Verdict, r.Reasons, r.Warnings)
			if r.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s", r.Verdict, tc.verdict)
			}
			inOrder(t, "reasons", r.Reasons, tc.reasons)
			inOrder(t, "warnings", r.Warnings, tc.warnings)
			steady, ok := r.Get(Key{Name: "steadyTransactionsPerSecond"})
			switch {
			case tc.steady == 0 && ok:
				t.Errorf("a steady-state throughput without a warm-up: %+v", steady)
			case tc.steady > 0 && (!ok || math.Abs(steady.Value-tc.steady) > 0.01*tc.steady):
				t.Errorf("steady-state throughput %+v, want about %g", steady, tc.steady)
			case ok && (r.Headline()[1] != steady || steady.Unit != "tx/s" || steady.Direction != HigherIsBetter):
				t.Errorf("the steady-state throughput %+v is not second among the headline metrics, in tx/s, higher is better", steady)
			}
		})
	}
}

// inOrder checks that the texts, joined, hold each of want in order, and
// that there are none when none are wanted.
func inOrder(t *testing.T, what string, got, want []string) {
	t.Helper()
	all := strings.Join(got, "\n")
	if len(want) == 0 && len(got) > 0 {
		t.Errorf("%s %q, want none", what, got)
	}
	rest := all
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("%s %q: no %q (in order)", what, got, w)
			return
		}
		rest = rest[i+len(w):]
	}
}

func TestDrift(t *testing.T) {
	r := pgbenchResult(noisy(60, 5000, 3, func(s int) float64 { return 0.9 + 0.2*float64(s)/60 }))
	s, ok, _ := Analyse(r, 0, DefaultStallPercent, DefaultDipPercent)
	if !ok || s.Drift == nil {
		t.Fatalf("no drift in %+v", s)
	}
	d := *s.Drift
	if math.Abs(d.Percent-20) > 1.5 || !d.Significant() || d.CILow > d.Percent || d.CIHigh < d.Percent || d.DF != 58 {
		t.Errorf("drift %+v: want about +20 %%, significant, inside its interval, 58 df", d)
	}
	flatR := pgbenchResult(noisy(60, 5000, 3, flat))
	s, _, _ = Analyse(flatR, 0, DefaultStallPercent, DefaultDipPercent)
	if s.Drift == nil || math.Abs(s.Drift.Percent) > 2 || s.Drift.CILow > 0 || s.Drift.CIHigh < 0 {
		t.Errorf("flat: drift %+v, want within ±2 %% and an interval around 0", s.Drift)
	}
	if m, ok := flatR.Get(Key{Name: "driftPercent"}); ok {
		t.Errorf("Analyse added %+v", m)
	}
}

// TestRampUpIsLeftOut: a tool that reports a ramp-up its own figures leave
// out (HammerDB's counter series runs through it) has it left out of the
// stability checks too, before the warm-up.
func TestRampUpIsLeftOut(t *testing.T) {
	r := New("tpcc")
	r.Primary = Key{Name: "nopm"}
	r.Add(Metric{Name: "nopm", Value: 7000, Unit: "NOPM", Direction: HigherIsBetter})
	r.Add(Metric{Name: "tpm", Value: 16000, Unit: "TPM", Direction: HigherIsBetter})
	r.SetParam(RampUpParameter, "1")
	var vals []float64
	for i := range 18 { // every 10 s: a minute of ramp-up at double, then two minutes steady
		vals = append(vals, map[bool]float64{true: 32000, false: 16000}[i < 6])
	}
	for i, v := range vals {
		r.TimeSeries = append(r.TimeSeries, Point{ElapsedSeconds: float64(10 * (i + 1)), Values: map[string]float64{"tpm": v}})
	}
	ApplyThresholds(r, Thresholds{Warmup: 20 * time.Second, MaxDriftPercent: 10})
	if r.Verdict != Succeeded || len(r.Warnings) > 0 {
		t.Errorf("%s %q %q", r.Verdict, r.Reasons, r.Warnings)
	}
	if m, ok := r.Get(Key{Name: "steadyTpm"}); !ok || m.Value != 16000 || m.Unit != "TPM" {
		t.Errorf("steady-state throughput %+v, want 16000 TPM after the ramp-up and the warm-up", m)
	}
	s, _, _ := Analyse(r, 20*time.Second, DefaultStallPercent, DefaultDipPercent)
	if s.Skipped != 80*time.Second || s.From != 80*time.Second || s.To != 180*time.Second {
		t.Errorf("window %s to %s after %s: want 1m20s to 3m after 1m20s", s.From, s.To, s.Skipped)
	}
}
