package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The Lan-DeMets O'Brien-Fleming boundaries of five equally spaced looks
// at a two-sided 5 % are the published ones (R's ldbounds and gsDesign's
// sfLDOF: 4.877, 3.357, 2.680, 2.290, 2.031); one look is the fixed design's 1.96; and each design's
// boundaries, crossed by standard normal sums simulated look by look,
// spend alpha as their function says: in total alpha, and at the first
// look only its share.
func TestBoundariesSpendAlphaAsPublished(t *testing.T) {
	obf := SequentialDesign{Alpha: 0.05, MinRounds: 1, MaxRounds: 5, Spending: SpendingOBrienFleming}.Boundaries()
	for i, want := range []float64{4.877, 3.357, 2.680, 2.290, 2.031} {
		if math.Abs(obf[i]-want) > 0.005 {
			t.Errorf("O'Brien-Fleming look %d: %.4f, published %.3f (all: %.4f)", i+1, obf[i], want, obf)
		}
	}
	if one := (SequentialDesign{Alpha: 0.05, MinRounds: 1, MaxRounds: 1}).Boundaries(); len(one) != 1 || math.Abs(one[0]-1.95996) > 1e-4 {
		t.Errorf("one look: %v, want 1.960", one)
	}
	r := rand.New(rand.NewPCG(1, 2))
	const trials = 200000
	for _, d := range []SequentialDesign{
		{Alpha: 0.05, MinRounds: 3, MaxRounds: 10, Spending: SpendingOBrienFleming},
		{Alpha: 0.05, MinRounds: 3, MaxRounds: 10, Spending: SpendingPocock},
		{Alpha: 0.01, MinRounds: 2, MaxRounds: 20, Spending: SpendingPocock},
	} {
		b := d.Boundaries()
		var crossed, first int
		for range trials {
			var s float64
			for n := 1; n <= d.MaxRounds; n++ {
				s += r.NormFloat64()
				if n < d.MinRounds {
					continue
				}
				if math.Abs(s)/math.Sqrt(float64(n)) > b[n-d.MinRounds] {
					crossed++
					if n == d.MinRounds {
						first++
					}
					break
				}
			}
		}
		se := math.Sqrt(d.Alpha * (1 - d.Alpha) / trials)
		got, firstGot, firstWant := float64(crossed)/trials, float64(first)/trials, d.spent(float64(d.MinRounds)/float64(d.MaxRounds))
		t.Logf("%s %d…%d at %.2g: boundaries %.3f; crossed %.4f (first look %.4f, spends %.4f)", d.Spending, d.MinRounds, d.MaxRounds, d.Alpha, b, got, firstGot, firstWant)
		if math.Abs(got-d.Alpha) > 4*se {
			t.Errorf("%s: the boundaries are crossed by %.4f of null paths, want %.3g ± %.4f", d.Spending, got, d.Alpha, 4*se)
		}
		if math.Abs(firstGot-firstWant) > 4*math.Sqrt(firstWant/trials)+1e-4 {
			t.Errorf("%s: the first look is crossed by %.4f, spends %.4f", d.Spending, firstGot, firstWant)
		}
	}
}

// sequentialTrial runs a sequential paired comparison on simulated rounds
// (designTrial's values: ABBA, drift, noise) and returns the rounds it ran
// and its verdict, judged as the comparison judges its headline.
func sequentialTrial(r *rand.Rand, p SequentialPlan, trial designTrial) (int, Verdict) {
	d := p.SequentialDesign
	trial.n = d.MaxRounds
	base, cand := trial.values(r)
	for n := 2; n <= d.MaxRounds; n++ {
		look := p.Look(LogRatios(base[:n], cand[:n]))
		if look.Decision != SequentialContinue {
			return n, look.Verdict(HigherIsBetter, d.MinEffectPercent)
		}
	}
	return d.MaxRounds, Inconclusive
}

// Looking after every round keeps the false verdicts at alpha (the t
// scale makes up for few rounds' estimated variance), where testing every
// round at alpha would not; a 30 % change at CV 2 % stops at the first
// look, a 3 % one well before the most rounds, and no change runs on
// until a change of the target is ruled out.
func TestSequentialLooksKeepTheirFalseVerdictRate(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const trials = 10000
	for _, spending := range []Spending{SpendingOBrienFleming, SpendingPocock} {
		d := SequentialDesign{Alpha: 0.05, MinRounds: 3, MaxRounds: 12, Spending: spending, MinEffectPercent: 1, TargetEffectPercent: 3}
		plan := d.Plan()
		var falseVerdicts, naive int
		var rounds float64
		for range trials {
			trial := designTrial{cvPercent: 2, driftPercent: 0.5}
			n, v := sequentialTrial(r, plan, trial)
			rounds += float64(n)
			if v == Better || v == Worse {
				falseVerdicts++
			}
			// The naive design: a paired t at 5 % after every round.
			trial.n = d.MaxRounds
			base, cand := trial.values(r)
			ratios := LogRatios(base, cand)
			for k := d.MinRounds; k <= d.MaxRounds; k++ {
				s := Summarize(ratios[:k])
				if se := s.StdDev / math.Sqrt(float64(k)); StudentTwoSided(s.Mean/se, float64(k-1)) < d.Alpha && 100*math.Abs(math.Expm1(s.Mean)) >= d.MinEffectPercent {
					naive++
					break
				}
			}
		}
		rate, naiveRate := float64(falseVerdicts)/trials, float64(naive)/trials
		t.Logf("%s, no change: false verdicts %.4f (naive looks at 5 %%: %.4f), mean rounds %.2f of %d", spending, rate, naiveRate, rounds/trials, d.MaxRounds)
		if rate > d.Alpha+4*math.Sqrt(d.Alpha*(1-d.Alpha)/trials) {
			t.Errorf("%s: false verdicts %.4f, above alpha %.2g", spending, rate, d.Alpha)
		}
		if naiveRate < 2*d.Alpha {
			t.Errorf("naive looks: false verdicts %.4f; the simulation does not show what the spending is for", naiveRate)
		}
		// With no minimum effect and no target to rule out, a look can
		// only stop on a change: the calibrated t values spend alpha
		// exactly (the normal boundaries moved to t at their nominal
		// level let through 1.1-1.3 % at alpha 1 %).
		bare := SequentialDesign{Alpha: 0.05, MinRounds: 3, MaxRounds: 12, Spending: spending, TargetEffectPercent: 1e-9}.Plan()
		bareFalse := 0
		for range trials {
			if _, v := sequentialTrial(r, bare, designTrial{cvPercent: 2}); v == Better || v == Worse {
				bareFalse++
			}
		}
		bareRate := float64(bareFalse) / trials
		t.Logf("%s, no change, stopping on a change only: false verdicts %.4f", spending, bareRate)
		if math.Abs(bareRate-d.Alpha) > 4*math.Sqrt(d.Alpha*(1-d.Alpha)/trials) {
			t.Errorf("%s: stopping on a change only, false verdicts %.4f, want alpha %.2g", spending, bareRate, d.Alpha)
		}
		// O'Brien-Fleming's first looks are strict (the 30 % drop waits
		// for the fourth or fifth round), Pocock's are not.
		first := map[Spending]float64{SpendingOBrienFleming: 5, SpendingPocock: 3.1}[spending]
		for _, c := range []struct {
			drop      float64
			maxRounds float64
			power     float64
		}{{30, first, 0.99}, {3, 10, 0.7}} {
			var found int
			var rounds float64
			for range 2000 {
				n, v := sequentialTrial(r, plan, designTrial{cvPercent: 2, driftPercent: 0.5, dropPercent: c.drop})
				rounds += float64(n)
				if v == Worse {
					found++
				}
			}
			power, mean := float64(found)/2000, rounds/2000
			t.Logf("%s, a %.0f %% drop: found %.3f, mean rounds %.2f", spending, c.drop, power, mean)
			if power < c.power || mean > c.maxRounds {
				t.Errorf("%s, a %.0f %% drop: found %.3f in %.2f rounds on average, want ≥ %.2f in ≤ %.0f", spending, c.drop, power, mean, c.power, c.maxRounds)
			}
		}
	}
}

// BenchmarkSequentialDesign prints, for the paired design stopping early
// (alpha 1 %, minimum effect 1 %, target 3 %, first look after 3 rounds),
// its power for a 3 % drop at CV 2 %, its false verdicts with no change,
// and the mean rounds it ran in each case, against the most rounds
// planned, on stationary noise and under a drift of 0.5 % per round, 2000
// trials a cell. Run:
// go test ./internal/stats -run '^$' -bench SequentialDesign -benchtime 1x
func BenchmarkSequentialDesign(b *testing.B) {
	const trials = 2000
	for _, spending := range []Spending{SpendingOBrienFleming, SpendingPocock} {
		for _, drift := range []float64{0, 0.5} {
			for _, most := range []int{10, 17, 20, 24} {
				b.Run(fmt.Sprintf("%s/drift=%g%%/max=%d", spending, drift, most), func(b *testing.B) {
					d := SequentialDesign{Alpha: 0.01, MinRounds: 3, MaxRounds: most, Spending: spending, MinEffectPercent: 1, TargetEffectPercent: 3}
					plan := d.Plan()
					var power, falseRate, roundsDrop, roundsSame float64
					for b.Loop() {
						r := rand.New(rand.NewPCG(uint64(most), uint64(drift*10)+7))
						var found, wrong, nd, ns int
						for range trials {
							n, v := sequentialTrial(r, plan, designTrial{cvPercent: 2, dropPercent: 3, driftPercent: drift})
							nd += n
							if v == Worse {
								found++
							}
							n, v = sequentialTrial(r, plan, designTrial{cvPercent: 2, driftPercent: drift})
							ns += n
							if v == Worse || v == Better {
								wrong++
							}
						}
						power, falseRate = float64(found)/trials, float64(wrong)/trials
						roundsDrop, roundsSame = float64(nd)/trials, float64(ns)/trials
					}
					b.ReportMetric(100*power, "power%")
					b.ReportMetric(100*falseRate, "false%")
					b.ReportMetric(roundsDrop, "rounds-drop")
					b.ReportMetric(roundsSame, "rounds-same")
				})
			}
		}
	}
}

// selectNth finds the k-th smallest value and partitions around it, ties
// and all.
func TestSelectNth(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 3, 10, 1000} {
		for range 20 {
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(r.IntN(7)) // ties
			}
			sorted := slices.Clone(v)
			slices.Sort(sorted)
			k := r.IntN(n)
			if got := selectNth(v, k); got != sorted[k] || slices.Max(v[:k+1]) != got || slices.Min(v[k:]) != got {
				t.Fatalf("n %d, k %d: %v, want %v (partition %v)", n, k, got, sorted[k], v)
			}
		}
	}
}
