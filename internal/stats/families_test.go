package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// A family design: the test and the correction over the operations'
// metrics.
type design struct {
	name string
	crit Criteria
}

var designs = []design{
	{"rank+Holm", Criteria{Alpha: 0.05, MinEffectPercent: 1, Test: RankTest, Correction: Holm}},
	{"rank+BH", Criteria{Alpha: 0.05, MinEffectPercent: 1, Test: RankTest, Correction: BenjaminiHochberg}},
	{"welchlog+BH", Criteria{Alpha: 0.05, MinEffectPercent: 1, Test: WelchLogTest, Correction: BenjaminiHochberg}},
}

// familyOutcome counts a simulation's verdicts on the operations' metrics.
type familyOutcome struct {
	shifted, caught          int // metrics truly changed, and judged in the right direction
	unshifted, falseVerdicts int // metrics not changed, and judged Better or Worse anyway
	verdicts                 int // all Better/Worse verdicts
	anyFalse, trials         int // trials with at least one false verdict
}

func (o familyOutcome) power() float64      { return ratio(o.caught, o.shifted) }
func (o familyOutcome) falseRate() float64  { return ratio(o.falseVerdicts, o.unshifted) }
func (o familyOutcome) fdr() float64        { return ratio(o.falseVerdicts, o.verdicts) }
func (o familyOutcome) familyWise() float64 { return ratio(o.anyFalse, o.trials) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// simulateFamily compares ops operations' throughput (CV cvTput %) and p99
// latency (CV cvP99 %) at n vs n repetitions; the first `slower` operations
// are shiftPercent slower in the candidate (throughput down, p99 up by
// the same factor), the rest unchanged. Noise is log-normal.
func simulateFamily(r *rand.Rand, d design, ops, slower, n int, cvTput, cvP99, shiftPercent float64, trials int) familyOutcome {
	var out familyOutcome
	draw := func(center, cv float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = center * math.Exp(r.NormFloat64()*cv/100)
		}
		return v
	}
	factor := 1 + shiftPercent/100
	for t := 0; t < trials; t++ {
		var samples []Sample
		var truth []Verdict
		for op := 0; op < ops; op++ {
			f, want := 1.0, NoChange
			if op < slower {
				f, want = factor, Worse
			}
			samples = append(samples,
				Sample{Key: fmt.Sprintf("tput/%d", op), Direction: HigherIsBetter, Baseline: draw(1000, cvTput), Candidate: draw(1000/f, cvTput)},
				Sample{Key: fmt.Sprintf("p99/%d", op), Direction: LowerIsBetter, Baseline: draw(20, cvP99), Candidate: draw(20*f, cvP99)})
			truth = append(truth, want, want)
		}
		anyFalse := false
		for i, c := range Compare(samples, d.crit) {
			judged := c.Verdict == Better || c.Verdict == Worse
			if judged {
				out.verdicts++
			}
			if truth[i] == Worse {
				out.shifted++
				if c.Verdict == Worse {
					out.caught++
				}
				continue
			}
			out.unshifted++
			if judged {
				out.falseVerdicts++
				anyFalse = true
			}
		}
		out.trials++
		if anyFalse {
			out.anyFalse++
		}
	}
	return out
}

// The family design of the operations (internal/compare): at 5 vs 5
// repetitions the exact rank test cannot give a verdict on any of 20
// operations whatever the correction, while Welch's t on logarithms with
// Benjamini-Hochberg finds a 30 % slowdown of 3 of them almost always and
// keeps false verdicts rare.
func TestOperationFamilyDesign(t *testing.T) {
	const ops, slower, n, trials = 20, 3, 5, 200
	got := map[string]familyOutcome{}
	for i, d := range designs {
		r := rand.New(rand.NewPCG(uint64(i)+1, 42))
		got[d.name] = simulateFamily(r, d, ops, slower, n, 3, 8, 30, trials)
		o := got[d.name]
		t.Logf("%-12s power %.3f, false verdicts %.4f of unchanged metrics, FDR %.3f, ≥1 false verdict in %.3f of trials",
			d.name, o.power(), o.falseRate(), o.fdr(), o.familyWise())
	}
	if p := got["rank+Holm"].power(); p != 0 {
		t.Errorf("rank test with Holm over 40 metrics at 5 vs 5: power %.3f, want 0 (its smallest p, 2/252, times 40 is above 0.05)", p)
	}
	// With BH the rank test's verdicts come only when false ones join the
	// true (six p-values at 2/252 need a seventh to pass 0.05·k/40), so
	// its power is low and bought with false discoveries.
	if o := got["rank+BH"]; o.power() > 0.5 || o.fdr() < 0.1 {
		t.Errorf("rank test with BH: power %.3f, FDR %.3f; want the design useless (power ≤ 0.5, its verdicts carried by false ones)", o.power(), o.fdr())
	}
	w := got["welchlog+BH"]
	if w.power() < 0.9 || w.falseRate() > 0.01 || w.fdr() > 0.05 {
		t.Errorf("welchlog+BH: power %.3f (want ≥ 0.9), false verdicts %.4f (want ≤ 0.01), FDR %.3f (want ≤ 0.05)", w.power(), w.falseRate(), w.fdr())
	}
}

// BenchmarkOperationFamilies reports each design's power and false-verdict
// rates for 20 and 100 operations (a throughput and a p99 each; 3 and 10
// of them slower by 10 % or 30 %) at 5 vs 5 repetitions, CV 3 % for
// throughput and 8 % for p99, 200 trials each.
// Run: go test ./internal/stats -run '^$' -bench OperationFamilies -benchtime 1x
func BenchmarkOperationFamilies(b *testing.B) {
	for _, ops := range []int{20, 100} {
		slower := 3
		if ops == 100 {
			slower = 10
		}
		for _, shift := range []float64{10, 30} {
			for i, d := range designs {
				b.Run(fmt.Sprintf("ops=%d/slower=%d/shift=%g%%/%s", ops, slower, shift, d.name), func(b *testing.B) {
					var o familyOutcome
					for b.Loop() {
						r := rand.New(rand.NewPCG(uint64(ops)*7+uint64(i), uint64(shift)))
						o = simulateFamily(r, d, ops, slower, 5, 3, 8, shift, 200)
					}
					b.ReportMetric(100*o.power(), "power%")
					b.ReportMetric(100*o.falseRate(), "falseverdict%")
					b.ReportMetric(100*o.fdr(), "FDR%")
					b.ReportMetric(100*o.familyWise(), "anyfalse%")
				})
			}
		}
	}
}
