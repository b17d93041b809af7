package stats

import "math"

// changePointP is the level of the ChangePoint method's tests (that of
// ChangePoints' Welch pruning): histories are long and false alarms costly.
const changePointP = 0.001

// changePoint judges point i, no episode being open, by the ChangePoint
// method: the newest one to four values against the accepted level before
// them (a prediction test: provisional at one or two values), or, failing
// that, E-divisive means over the level and the new value, which finds
// smaller shifts once enough runs carry them.
func (r *replay) changePoint(i int, v float64) {
	pt := &r.points[i]
	if len(r.st.Baseline) < r.need() {
		pt.Outcome, pt.ReferenceRuns = OutcomeNotEnoughHistory, len(r.st.Baseline)
		r.absorb(i)
		return
	}
	s := append(append([]LevelPoint(nil), r.st.Baseline...), r.point(i))
	pt.DeltaPercent, pt.ReferenceRuns = ptrTo(relDelta(v, Summarize(values(r.st.Baseline)).Mean)), len(r.st.Baseline)
	if k, kind, ok := r.tailShift(s, nil); ok {
		ref := s[:len(s)-k]
		r.st.Baseline = ref
		r.open(i, kind, Summarize(values(ref)).Mean, len(ref), k <= 2, s[len(s)-k:])
		return
	}
	if c, prev, kind, ok := r.split(s); ok {
		ref := s[prev:c]
		r.st.Baseline = ref
		r.open(i, kind, Summarize(values(ref)).Mean, len(ref), false, s[c:])
		return
	}
	pt.Outcome = OutcomeNoRegression
	r.absorb(i)
}

// tailShift finds the longest run of newest values (fewer than a segment,
// after at least three of the level) each of which differs from the level
// before them by the minimum effect, in one direction, and whose mean the
// level's own spread makes unlikely: a two-sample t with the level's
// standard deviation (the tail is too short to have its own). Without
// qualifies, the values must differ from the level's mean; with it, they
// must each qualify (leaving an episode: back towards its reference).
func (r *replay) tailShift(s []LevelPoint, qualifies func(float64) bool) (int, ChangeKind, bool) {
	n := len(s)
	for k := min(MinChangePointBaseline-1, n-3); k >= 1; k-- {
		ref, tail := values(s[:n-k]), values(s[n-k:])
		sum := Summarize(ref)
		mt := Summarize(tail).Mean
		worse, better := r.classify(relDelta(mt, sum.Mean))
		if !worse && !better {
			continue
		}
		ok := true
		for _, x := range tail {
			w, b := r.classify(relDelta(x, sum.Mean))
			if qualifies != nil {
				w, b = (x-sum.Mean)*(mt-sum.Mean) > 0, false
				if !qualifies(x) {
					w = false
				}
			}
			if w != worse || b != better {
				ok = false
			}
		}
		if !ok {
			continue
		}
		p := 0.0
		if sum.StdDev > 0 {
			t := (mt - sum.Mean) / (sum.StdDev * math.Sqrt(1/float64(k)+1/float64(len(ref))))
			p = StudentTwoSided(math.Abs(t), float64(len(ref)-1))
		}
		if p < changePointP {
			return k, kindOf(worse), true
		}
	}
	return 0, "", false
}

// split runs E-divisive means over the level and the new value: the latest
// change point, if it reaches the minimum effect, starts a new level at c,
// measured against the segment from prev.
func (r *replay) split(s []LevelPoint) (c, prev int, kind ChangeKind, ok bool) {
	if len(s) < 2*MinChangePointBaseline {
		return 0, 0, "", false
	}
	cps := ChangePoints(values(s), ChangePointOptions{MinEffectPercent: r.margin()})
	if len(cps) == 0 {
		return 0, 0, "", false
	}
	last := cps[len(cps)-1]
	worse, better := r.classify(last.DeltaPercent)
	if !worse && !better {
		return 0, 0, "", false
	}
	if len(cps) > 1 {
		prev = cps[len(cps)-2].Index
	}
	return last.Index, prev, kindOf(worse), true
}
