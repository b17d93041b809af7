package stats

import (
	"fmt"
	"math"
)

// replay walks a history oldest first, carrying the accepted level and the
// open episode from point to point.
type replay struct {
	h      []HistoryPoint
	p      RegressionPolicy
	worse  func(float64) bool
	st     LevelState
	points []PointJudgement
	// newest is the index of the newest judged point (-1: none).
	newest int
}

func newReplay(h []HistoryPoint, p RegressionPolicy) *replay {
	r := &replay{h: h, p: p, worse: worseFn(h), points: make([]PointJudgement, len(h)), newest: -1}
	if p.Start != nil {
		r.st = p.Start.Clone()
	}
	return r
}

// need is how many valid runs the accepted level must hold before a run is
// judged against it.
func (r *replay) need() int {
	if r.p.Method == MethodChangePoint {
		return max(r.p.BaselineRuns, MinChangePointBaseline)
	}
	return r.p.BaselineRuns
}

// window is how many values of a level are kept.
func (r *replay) window() int {
	if r.p.Method == MethodChangePoint {
		return max(r.p.BaselineRuns, changePointWindow)
	}
	return r.p.BaselineRuns
}

// margin is the smallest change that counts.
func (r *replay) margin() float64 {
	if r.p.Method == MethodChangePoint {
		return r.p.MinEffectPercent
	}
	return r.p.ThresholdPercent
}

func (r *replay) run() {
	for i, h := range r.h {
		if r.judge(i, h) {
			r.newest = i
		}
		// An acknowledgement takes effect after the run it names, judged
		// or not.
		if h.Ack != nil {
			r.acknowledge(i, *h.Ack)
		}
	}
}

// judge judges point i; false when it cannot be (a failed run, no value).
func (r *replay) judge(i int, h HistoryPoint) bool {
	switch {
	case r.p.Method == MethodVerdict:
		if !h.Succeeded || h.Verdict == "" {
			return false
		}
		r.verdict(i)
	case !h.Succeeded || h.Value == nil || math.IsNaN(*h.Value):
		return false
	case r.st.Open != nil:
		r.continueEpisode(i, *h.Value)
	case r.p.Method == MethodChangePoint:
		r.changePoint(i, *h.Value)
	default:
		r.threshold(i, *h.Value)
	}
	return true
}

// classify says whether a change of d % counts, and which way.
func (r *replay) classify(d float64) (worse, better bool) {
	if math.IsNaN(d) || math.Abs(d) < r.margin() || d == 0 {
		return false, false
	}
	w := r.worse(d)
	return w, !w
}

func kindOf(worse bool) ChangeKind {
	if worse {
		return KindRegression
	}
	return KindImprovement
}

func outcomeOf(k ChangeKind) Outcome {
	if k == KindImprovement {
		return OutcomeImprovement
	}
	return OutcomeRegression
}

func (r *replay) point(i int) LevelPoint {
	return LevelPoint{Run: r.h[i].Run, Release: r.h[i].Release, Value: *r.h[i].Value}
}

// absorb adds a point of the accepted level to the baseline, unless the
// baseline selector leaves it out.
func (r *replay) absorb(i int) {
	if !r.h[i].OutsideBaseline {
		r.st.Baseline = keepNewest(r.st.Baseline, r.window(), r.point(i))
	}
}

func (r *replay) threshold(i int, v float64) {
	pt := &r.points[i]
	if len(r.st.Baseline) < r.need() {
		pt.Outcome, pt.ReferenceRuns = OutcomeNotEnoughHistory, len(r.st.Baseline)
		r.absorb(i)
		return
	}
	ref := Summarize(values(r.st.Baseline)).Median
	d := relDelta(v, ref)
	pt.DeltaPercent, pt.ReferenceRuns = ptrTo(d), len(r.st.Baseline)
	if worse, better := r.classify(d); worse || better {
		r.open(i, kindOf(worse), ref, len(r.st.Baseline), false, []LevelPoint{r.point(i)})
		return
	}
	pt.Outcome = OutcomeNoRegression
	r.absorb(i)
}

// open starts an episode at point i against ref; values are its runs so
// far (more than one when change-point detection finds it late).
func (r *replay) open(i int, kind ChangeKind, ref float64, refRuns int, provisional bool, vals []LevelPoint) {
	// The first run may be older than the history (a carried value).
	first := r.index(vals[0].Run, i)
	e := &Episode{Kind: kind, FirstRun: vals[0].Run, FirstRelease: vals[0].Release, Reference: ref, ReferenceRuns: refRuns,
		Runs: len(vals), LatestRun: r.h[i].Run, Provisional: provisional, Values: keepNewest(nil, r.window(), vals...)}
	e.DeltaPercent = relDelta(vals[len(vals)-1].Value, ref)
	r.st.Open = e
	// Every run of the new level is part of it, the earlier ones included.
	for j := first; j <= i; j++ {
		if pj := &r.points[j]; pj.Outcome != "" || j == i {
			pj.Outcome = outcomeOf(kind)
			if v := r.h[j].Value; v != nil {
				pj.DeltaPercent, pj.ReferenceRuns = ptrTo(relDelta(*v, ref)), refRuns
			}
		}
	}
	if r.h[first].Run == e.FirstRun {
		r.points[first].ChangePoint = true
		r.points[first].Provisional = provisional
	}
	t := RegressionOpened
	if kind == KindImprovement {
		t = ImprovementOpened
	}
	r.note(i, t, fmt.Sprintf("%s opened: %s", word(kind), e.describe()))
}

// index finds a run's point at or before i (i when it is not there).
func (r *replay) index(run string, i int) int {
	for j := i; j >= 0; j-- {
		if r.h[j].Run == run {
			return j
		}
	}
	return i
}

func (r *replay) note(i int, k TransitionKind, msg string) {
	r.points[i].Transitions = append(r.points[i].Transitions, Transition{Kind: k, Message: msg})
}

// continueEpisode judges a point while an episode is open: against the
// episode's reference, never against the changed runs themselves.
func (r *replay) continueEpisode(i int, v float64) {
	pt, e := &r.points[i], r.st.Open
	d := relDelta(v, e.Reference)
	pt.DeltaPercent, pt.ReferenceRuns = ptrTo(d), e.ReferenceRuns
	worse, better := r.classify(d)
	switch {
	case worse && e.Kind == KindRegression || better && e.Kind == KindImprovement:
		pt.Outcome = outcomeOf(e.Kind)
		r.extend(i, d)
		if e.Provisional {
			r.confirm(i)
		}
		if r.st.Open != nil && e.Kind == KindImprovement && !e.Provisional && e.Runs >= r.need() && r.p.Method != MethodVerdict {
			r.adopt(i)
		}
	case r.p.Method == MethodChangePoint && !e.Provisional:
		// A confirmed change ends the way it began: when the newest runs
		// differ from its level by the same test, not at one lucky run.
		pt.Outcome = outcomeOf(e.Kind)
		r.extend(i, d)
		if k, _, ok := r.tailShift(e.Values, func(x float64) bool {
			w, b := r.classify(relDelta(x, e.Reference))
			stays := w && e.Kind == KindRegression || b && e.Kind == KindImprovement
			return !stays
		}); ok {
			r.reopen(i, e, k)
		}
	case worse || better:
		// Across the reference to the other side: the open episode ends
		// and one of the other kind starts against the same reference.
		r.close(i, v)
		r.open(i, kindOf(worse), e.Reference, e.ReferenceRuns, r.p.Method == MethodChangePoint, []LevelPoint{r.point(i)})
	default:
		pt.Outcome = OutcomeNoRegression
		r.close(i, v)
	}
}

// extend adds point i to the open episode.
func (r *replay) extend(i int, d float64) {
	e := r.st.Open
	e.Runs++
	e.LatestRun, e.DeltaPercent = r.h[i].Run, d
	e.Values = keepNewest(e.Values, r.window(), r.point(i))
}

// reopen ends a confirmed change-point episode whose newest k runs left its
// level: they are back (Recovered), or across the reference (the other kind
// opens with them).
func (r *replay) reopen(i int, e *Episode, k int) {
	tail := e.Values[len(e.Values)-k:]
	e.Values = e.Values[:len(e.Values)-k]
	e.Runs -= k
	mean := Summarize(values(tail)).Mean
	r.st.Open = nil
	d := relDelta(mean, e.Reference)
	kind := RegressionRecovered
	if e.Kind == KindImprovement {
		kind = ImprovementEnded
	}
	r.note(i, kind, fmt.Sprintf("%s ended: the newest %d run%s (from run %s) left its level, %+.1f %% against the level before it",
		e.describe(), k, plural(k), tail[0].Run, d))
	for j := r.index(tail[0].Run, i); j <= i; j++ {
		if pj := &r.points[j]; pj.Outcome != "" {
			pj.Outcome = OutcomeNoRegression
		}
	}
	if worse, better := r.classify(d); worse || better {
		r.open(i, kindOf(worse), e.Reference, e.ReferenceRuns, k <= 2, tail)
		return
	}
	for _, p := range tail {
		if j := r.index(p.Run, i); !r.h[j].OutsideBaseline {
			r.st.Baseline = keepNewest(r.st.Baseline, r.window(), p)
		}
	}
}

// close ends the open episode at point i: back within the margin of the
// reference (or beyond it). A provisional one was not confirmed: its runs
// join the level they did not leave.
func (r *replay) close(i int, v float64) {
	e := r.st.Open
	r.st.Open = nil
	d := relDelta(v, e.Reference)
	var k TransitionKind
	var msg string
	switch {
	case e.Provisional:
		k = RegressionNotConfirmed
		if e.Kind == KindImprovement {
			k = ImprovementNotConfirmed
		}
		msg = fmt.Sprintf("%s was not confirmed: run %s is %+.1f %% against the level before it", e.describe(), r.h[i].Run, d)
		for _, p := range e.Values {
			if j := r.index(p.Run, i); !r.h[j].OutsideBaseline {
				r.st.Baseline = keepNewest(r.st.Baseline, r.window(), p)
			}
		}
		for j := r.index(e.FirstRun, i); j < i; j++ {
			if pj := &r.points[j]; pj.Outcome != "" {
				pj.ChangePoint, pj.Provisional, pj.Outcome = false, false, OutcomeNoRegression
			}
		}
	case e.Kind == KindRegression:
		k = RegressionRecovered
		msg = fmt.Sprintf("%s ended: run %s is back within %g %% of the level before it (%+.1f %%)", e.describe(), r.h[i].Run, r.margin(), d)
	default:
		k = ImprovementEnded
		msg = fmt.Sprintf("%s ended: run %s is back within %g %% of the level before it (%+.1f %%)", e.describe(), r.h[i].Run, r.margin(), d)
	}
	r.note(i, k, msg)
	if w, b := r.classify(d); !w && !b {
		r.absorb(i)
	}
}

// confirm makes a provisional change definite once three or more runs of
// the new level differ from the level before by Welch's test, or drops it
// when a full segment still does not.
func (r *replay) confirm(i int) {
	e := r.st.Open
	if len(e.Values) < 3 {
		return
	}
	before, after := values(r.st.Baseline), values(e.Values)
	_, _, p := WelchT(before, after)
	d := relDelta(Summarize(after).Mean, Summarize(before).Mean)
	if w, b := r.classify(d); p < changePointP && (w || b) {
		e.Provisional = false
		r.points[r.index(e.FirstRun, i)].Provisional = false
		k := RegressionConfirmed
		if e.Kind == KindImprovement {
			k = ImprovementConfirmed
		}
		r.note(i, k, fmt.Sprintf("%s confirmed by %d runs (Welch p %.2g)", e.describe(), len(e.Values), p))
		return
	}
	if len(e.Values) >= MinChangePointBaseline {
		r.close(i, *r.h[i].Value)
		r.points[i].Outcome = OutcomeNoRegression
	}
}

// adopt makes an improvement that held for a baseline's worth of runs the
// new baseline.
func (r *replay) adopt(i int) {
	e := r.st.Open
	r.st.Open = nil
	r.st.Baseline = keepNewest(nil, r.window(), e.Values...)
	r.st.AckedAt = e.FirstRun
	r.note(i, ImprovementAdopted, fmt.Sprintf("%s held for %d runs: its level is the baseline from now on", e.describe(), e.Runs))
}

// acknowledge accepts the open episode's level after point i: the runs
// from ack.From (default its first run) on become the baseline.
func (r *replay) acknowledge(i int, ack Acknowledgement) {
	e := r.st.Open
	if e == nil {
		return
	}
	vals := e.Values
	from := e.FirstRun
	for k, p := range e.Values {
		if p.Run == ack.From {
			vals, from = e.Values[k:], ack.From
			break
		}
	}
	r.st.Open = nil
	r.st.Baseline = keepNewest(nil, r.window(), vals...)
	r.st.AckedAt = from
	r.points[i].Acknowledged = true
	k := RegressionAcknowledged
	if e.Kind == KindImprovement {
		k = ImprovementAcknowledged
	}
	by := ack.By
	if by == "" {
		by = "someone"
	}
	r.note(i, k, fmt.Sprintf("%s acknowledged by %s at %s: %s; the level from run %s on is the baseline",
		e.describe(), by, ack.At.UTC().Format("2006-01-02T15:04:05Z"), ack.Reason, from))
}

// verdict judges a comparison by its verdict on the watched metric.
func (r *replay) verdict(i int) {
	h, pt := r.h[i], &r.points[i]
	if h.Value != nil {
		pt.DeltaPercent = ptrTo(*h.Value)
	}
	delta := 0.0
	if h.Value != nil {
		delta = *h.Value
	}
	e := r.st.Open
	switch h.Verdict {
	case Worse, Better:
		kind := KindRegression
		if h.Verdict == Better {
			kind = KindImprovement
		}
		pt.Outcome = outcomeOf(kind)
		if e != nil && e.Kind == kind {
			e.Runs++
			e.LatestRun, e.DeltaPercent = h.Run, delta
			return
		}
		if e != nil {
			r.closeVerdict(i, e)
		}
		r.st.Open = &Episode{Kind: kind, FirstRun: h.Run, FirstRelease: h.Release, Runs: 1, LatestRun: h.Run, DeltaPercent: delta}
		pt.ChangePoint = true
		t := RegressionOpened
		if kind == KindImprovement {
			t = ImprovementOpened
		}
		r.note(i, t, fmt.Sprintf("%s opened: %s in comparison %s", word(kind), h.Verdict, h.Run))
	case NoChange:
		pt.Outcome = OutcomeNoRegression
		if e != nil {
			r.closeVerdict(i, e)
		}
	default: // Inconclusive: no evidence either way; what is open stays open
		pt.Outcome = OutcomeNoRegression
		if e != nil {
			pt.Outcome = outcomeOf(e.Kind)
			e.LatestRun = h.Run
		}
	}
}

func (r *replay) closeVerdict(i int, e *Episode) {
	r.st.Open = nil
	k := RegressionRecovered
	if e.Kind == KindImprovement {
		k = ImprovementEnded
	}
	r.note(i, k, fmt.Sprintf("%s ended: %s in comparison %s", e.describe(), r.h[i].Verdict, r.h[i].Run))
}
