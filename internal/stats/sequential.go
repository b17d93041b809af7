package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// Spending is the alpha-spending function of a group sequential design
// (Lan & DeMets 1983): how much of the false-verdict rate alpha may be
// spent by the time a share t of the planned rounds has run.
type Spending string

const (
	// SpendingOBrienFleming spends almost nothing early,
	// 4 − 4Φ(z_{α/4}/√t) over both sides: an early stop needs an overwhelming change, and
	// the last look is tested at nearly the fixed design's level, so
	// running to the end costs almost nothing.
	SpendingOBrienFleming Spending = "OBrienFleming"
	// SpendingPocock spends evenly, α·ln(1 + (e − 1)t): early stops come
	// easier, and the last look is stricter than a fixed design's.
	SpendingPocock Spending = "Pocock"
)

// SequentialDesign is a group sequential test of a paired comparison's
// change: after every round from MinRounds to MaxRounds it looks at the
// rounds' log ratios and stops when the repeated confidence interval
// (Jennison & Turnbull 1989: the interval at the look's spent level, so
// that the intervals of every look together cover the change with
// 1 − Alpha) shows a change of at least MinEffectPercent, or rules out
// one of TargetEffectPercent. Looking after every round keeps the chance
// of any false Better or Worse at Alpha, which testing every round at
// Alpha would not (five looks at 5 % give ≈ 14 %).
type SequentialDesign struct {
	// Alpha is the two-sided false-verdict rate over every look.
	Alpha float64
	// MinRounds is the first look, MaxRounds the last (the planned size).
	MinRounds, MaxRounds int
	// Ran is the rounds run so far, when a look's ratios may be fewer (a
	// round whose measurement was excluded): a look once MaxRounds have
	// run decides, never continues.
	Ran      int
	Spending Spending
	// MinEffectPercent is the smallest change worth a verdict of Better or
	// Worse (the criteria's); TargetEffectPercent the change the
	// comparison must be able to tell: ruled out, it stops.
	MinEffectPercent, TargetEffectPercent float64
}

// spent is the alpha spent by information fraction t.
func (d SequentialDesign) spent(t float64) float64 {
	if t >= 1 {
		return d.Alpha
	}
	if d.Spending == SpendingPocock {
		return d.Alpha * math.Log(1+(math.E-1)*t)
	}
	// Each side spends α/2 by 2 − 2Φ(z_{1−α/4}/√t): 4 − 4Φ(…) in all.
	return 2 * math.Erfc(normalQuantile(1-d.Alpha/4)/math.Sqrt(t)/math.Sqrt2)
}

// boundaryGrid is the number of points the densities between looks are
// integrated over (Simpson's rule).
const boundaryGrid = 401

// Boundaries are the critical values, on the normal scale, of the looks
// at rounds MinRounds … MaxRounds (the first is index 0): a look's
// statistic beyond its value stops with a change. They are found by
// recursive numerical integration of the density of the sum of the
// increments between looks (Armitage, McPherson & Rowe 1969; Jennison &
// Turnbull 2000, ch. 19), each look's value making the chance of a first
// crossing there equal to the alpha spent since the look before.
func (d SequentialDesign) Boundaries() []float64 {
	first, last := max(d.MinRounds, 1), max(d.MaxRounds, 1)
	if first > last {
		first = last
	}
	var out []float64
	var grid, dens []float64 // the density of S on the last look's continuation region
	prevInfo, prevSpent := 0.0, 0.0
	for n := first; n <= last; n++ {
		info := float64(n)
		a := d.spent(info / float64(last))
		step := a - prevSpent
		prevSpent = a
		sd := math.Sqrt(info - prevInfo)
		var c float64
		switch {
		case step <= 0:
			c = math.Inf(1)
		case grid == nil:
			c = normalQuantile(1 - step/2)
		default:
			crossing := func(c float64) float64 {
				b := c * math.Sqrt(info)
				return simpson(grid, func(i int) float64 {
					u := grid[i]
					return dens[i] * (normalCDF((u-b)/sd) + normalCDF((-b-u)/sd))
				})
			}
			lo, hi := 0.0, 40.0
			for i := 0; i < 100 && hi-lo > 1e-10; i++ {
				mid := (lo + hi) / 2
				if crossing(mid) > step {
					lo = mid
				} else {
					hi = mid
				}
			}
			c = (lo + hi) / 2
		}
		out = append(out, c)
		// The density of S at this look on its continuation region.
		b := math.Min(c, 40) * math.Sqrt(info)
		next := make([]float64, boundaryGrid)
		nextDens := make([]float64, boundaryGrid)
		for i := range next {
			next[i] = -b + 2*b*float64(i)/float64(boundaryGrid-1)
			s := next[i]
			if grid == nil {
				nextDens[i] = normalDensity(s/sd) / sd
				continue
			}
			nextDens[i] = simpson(grid, func(j int) float64 { return dens[j] * normalDensity((s-grid[j])/sd) / sd })
		}
		grid, dens, prevInfo = next, nextDens, info
	}
	return out
}

// simpson integrates f sampled at the evenly spaced points x (an odd
// number of them).
func simpson(x []float64, f func(i int) float64) float64 {
	n := len(x)
	h := (x[n-1] - x[0]) / float64(n-1)
	s := f(0) + f(n-1)
	for i := 1; i < n-1; i++ {
		if i%2 == 1 {
			s += 4 * f(i)
		} else {
			s += 2 * f(i)
		}
	}
	return s * h / 3
}

func normalCDF(x float64) float64     { return 0.5 * math.Erfc(-x/math.Sqrt2) }
func normalDensity(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }

// SequentialDecision is what a look decided.
type SequentialDecision string

const (
	// SequentialContinue: neither shown, rounds left.
	SequentialContinue SequentialDecision = "Continue"
	// SequentialChanged: the interval excludes no change and the change is
	// at least the minimum effect.
	SequentialChanged SequentialDecision = "Changed"
	// SequentialEquivalent: the interval lies within ± the target effect,
	// so a change of that size is ruled out. An interval narrower than
	// half the target is always either this or Changed.
	SequentialEquivalent SequentialDecision = "Equivalent"
	// SequentialMaxRounds: the last planned round ran without either.
	SequentialMaxRounds SequentialDecision = "MaxRounds"
)

// SequentialLook is a look after Rounds rounds: the change (the rounds'
// mean log ratio, as a percentage) and its repeated confidence interval,
// the look's critical value on the t scale, and the decision.
type SequentialLook struct {
	Rounds                                int
	DeltaPercent, LowPercent, HighPercent float64
	// Critical is the t value the look's statistic had to pass
	// (studentBoundaries), so that few rounds' estimated variance costs
	// what it should.
	Critical float64
	// NominalAlpha is the two-sided level the look tests at.
	NominalAlpha float64
	Decision     SequentialDecision
	// Reason says it in words.
	Reason string
}

// SequentialPlan is a design with its looks' critical values worked out
// once (Plan).
type SequentialPlan struct {
	SequentialDesign
	// Critical and Nominal are, per look from MinRounds, the t value its
	// statistic must pass (studentBoundaries) and the two-sided level that
	// value stands for on Student's t with the look's rounds − 1 degrees
	// of freedom.
	Nominal, Critical []float64
}

// Plan works out the design's critical t values (studentBoundaries),
// once per design in a process.
func (d SequentialDesign) Plan() SequentialPlan {
	key := SequentialDesign{Alpha: d.Alpha, MinRounds: d.MinRounds, MaxRounds: d.MaxRounds, Spending: d.Spending}
	if cached, ok := plans.Load(key); ok {
		p := cached.(SequentialPlan)
		p.SequentialDesign = d
		return p
	}
	p := SequentialPlan{SequentialDesign: d}
	p.Critical = d.studentBoundaries(d.Boundaries())
	for i, c := range p.Critical {
		p.Nominal = append(p.Nominal, StudentTwoSided(c, float64(max(d.MinRounds, 2)+i-1)))
	}
	plans.Store(key, p)
	return p
}

// plans caches the plans worked out, by design (its alpha, looks and
// spending).
var plans sync.Map

// Calibration of the looks' t values: paths simulated, the fewest first
// crossings a look's share of alpha must stand for to be calibrated, and
// the seed (fixed: a design always gets the same values).
const (
	calibrationPaths     = 1 << 19
	calibrationCrossings = 50
	calibrationSeed      = 0x5e9
)

// studentBoundaries are the looks' critical values for the t statistic of
// the rounds' log ratios, whose variance is estimated from the rounds
// themselves. Moving the normal boundaries to Student's t at the same
// nominal level (Jennison & Turnbull 2000, §3.8) is not enough at a few
// rounds: simulated, it lets 1.1-1.3 % false verdicts through at alpha 1 %.
// So they are calibrated on the null itself: under no change the t
// statistics' joint law does not depend on the noise, so standard normal
// log ratios simulated round by round give it exactly, and each look's
// value is the one whose first crossings among the paths not stopped
// before spend the look's share of alpha. A share too small for the
// paths to resolve (O'Brien-Fleming's first looks) keeps the nominal
// level's t value, and its crossings are taken out all the same.
func (d SequentialDesign) studentBoundaries(z []float64) []float64 {
	first, last := max(d.MinRounds, 2), max(d.MaxRounds, 2)
	r := rand.New(rand.NewPCG(calibrationSeed, uint64(first*1000+last)))
	sum, sq := make([]float64, calibrationPaths), make([]float64, calibrationPaths)
	alive := make([]bool, calibrationPaths)
	for i := range alive {
		alive[i] = true
	}
	out := make([]float64, 0, len(z))
	prevSpent := 0.0
	abs := make([]float64, 0, calibrationPaths)
	for n := 1; n <= last; n++ {
		for i := range sum {
			x := r.NormFloat64()
			sum[i] += x
			sq[i] += x * x
		}
		j := n - max(d.MinRounds, 1)
		if n < first || j < 0 || j >= len(z) {
			continue
		}
		tOf := func(i int) float64 {
			fn := float64(n)
			mean := sum[i] / fn
			v := (sq[i] - fn*mean*mean) / (fn - 1)
			if v <= 0 {
				return math.Inf(1)
			}
			return math.Abs(mean) / math.Sqrt(v/fn)
		}
		a := d.spent(float64(n) / float64(last))
		want := (a - prevSpent) * calibrationPaths
		prevSpent = a
		crit := math.Inf(1)
		if nominal := math.Erfc(z[j] / math.Sqrt2); nominal > 0 {
			crit = StudentQuantile(1-nominal/2, float64(n-1))
		}
		if want >= calibrationCrossings {
			abs = abs[:0]
			for i, ok := range alive {
				if ok {
					abs = append(abs, tOf(i))
				}
			}
			if k := len(abs) - int(math.Round(want)); k > 0 && k < len(abs) {
				above := selectNth(abs, k)
				crit = (slices.Max(abs[:k]) + above) / 2
			}
		}
		out = append(out, crit)
		for i, ok := range alive {
			if ok && tOf(i) > crit {
				alive[i] = false
			}
		}
	}
	return out
}

// Look judges the log ratios of the rounds run so far (d[i] =
// ln(candidate/baseline) of round i). Before MinRounds it continues.
func (p SequentialPlan) Look(ratios []float64) SequentialLook {
	d := p.SequentialDesign
	n := len(ratios)
	first := max(d.MinRounds, 1)
	look := SequentialLook{Rounds: n, DeltaPercent: math.NaN(), LowPercent: math.Inf(-1), HighPercent: math.Inf(1), Decision: SequentialContinue}
	pct := func(x float64) float64 { return 100 * math.Expm1(x) }
	s := Summarize(ratios)
	if n > 0 {
		look.DeltaPercent = pct(s.Mean)
	}
	if n < first || n < 2 || n-first >= len(p.Critical) {
		look.Reason = fmt.Sprintf("%d rounds: the first look is after %d", n, max(first, 2))
		if max(n, d.Ran) >= max(d.MaxRounds, 1) {
			look.Decision, look.Reason = SequentialMaxRounds, fmt.Sprintf("%d rounds measured on both sides when the last planned round ended: too few to look at", n)
		}
		return look
	}
	look.NominalAlpha, look.Critical = p.Nominal[n-first], p.Critical[n-first]
	se := s.StdDev / math.Sqrt(float64(n))
	half := look.Critical * se
	if se == 0 {
		half = 0 // every round moved by the same ratio
	}
	look.LowPercent, look.HighPercent = pct(s.Mean-half), pct(s.Mean+half)
	m, e := d.MinEffectPercent, d.TargetEffectPercent
	if !(e > 0) {
		e = m
	}
	interval := fmt.Sprintf("%+.2f %% (interval %+.2f … %+.2f %% at the look's level %.2g, t %.3g)", look.DeltaPercent, look.LowPercent, look.HighPercent,
		look.NominalAlpha, look.Critical)
	switch {
	case (look.LowPercent > 0 || look.HighPercent < 0) && math.Abs(look.DeltaPercent) >= m:
		look.Decision, look.Reason = SequentialChanged, fmt.Sprintf("after %d rounds: %s excludes no change, at least the minimum effect %.1f %%", n, interval, m)
	case e > 0 && look.LowPercent > -e && look.HighPercent < e:
		look.Decision, look.Reason = SequentialEquivalent, fmt.Sprintf("after %d rounds: %s rules out a change of ±%.1f %%", n, interval, e)
	case max(n, d.Ran) >= d.MaxRounds:
		look.Decision, look.Reason = SequentialMaxRounds, fmt.Sprintf("after %d rounds, the last planned: %s shows neither a change of at least %.1f %% nor none of ±%.1f %%", n, interval, m, e)
	default:
		look.Reason = fmt.Sprintf("after %d rounds: %s shows neither a change of at least %.1f %% nor none of ±%.1f %%: another round", n, interval, m, e)
	}
	return look
}

// Verdict is the look's verdict on a metric of the direction dir, as the
// fixed design's judge gives it: Better or Worse when it changed; NoChange
// when the interval lies within ± the minimum effect; Inconclusive
// otherwise (a stop on the target that leaves the minimum effect open, or
// the last round without a decision).
func (l SequentialLook) Verdict(dir Direction, minEffectPercent float64) Verdict {
	switch {
	case l.Decision == SequentialChanged && dir != Neutral:
		if (l.DeltaPercent > 0) == (dir == HigherIsBetter) {
			return Better
		}
		return Worse
	case l.LowPercent > -minEffectPercent && l.HighPercent < minEffectPercent && l.Decision != SequentialContinue:
		return NoChange
	}
	return Inconclusive
}

// LogRatios are the rounds' ln(candidate/baseline), nil when a value is
// not positive.
func LogRatios(baseline, candidate []float64) []float64 {
	n := min(len(baseline), len(candidate))
	if !allPositive(baseline[:n]) || !allPositive(candidate[:n]) {
		return nil
	}
	return logRatios(baseline[:n], candidate[:n])
}

// selectNth reorders v so that v[k] is its k-th smallest value (from 0)
// with nothing larger before it and nothing smaller after, and returns it
// (Hoare's selection, the middle element as pivot: linear on average,
// where sorting a look's half a million paths would dominate the plan).
func selectNth(v []float64, k int) float64 {
	lo, hi := 0, len(v)-1
	for lo < hi {
		pivot := v[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for v[i] < pivot {
				i++
			}
			for v[j] > pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}
