package stats

import (
	"fmt"
	"math"
	"strconv"
)

// result turns the replay's end state and its newest point into the
// judgement: one condition for regressions and one for improvements.
func (r *replay) result() RegressionJudgement {
	out := RegressionJudgement{Points: r.points, State: r.st}
	for i, p := range r.points {
		if p.ChangePoint {
			out.ChangePoints = append(out.ChangePoints, i)
		}
	}
	if r.st.Open != nil {
		e := *r.st.Open
		out.Open = &e
	}
	out.Reason, out.Message = r.side(KindRegression)
	out.ImprovedReason, out.ImprovedMessage = r.side(KindImprovement)
	out.Regressed = out.Reason == ReasonRegression
	out.Improved = out.ImprovedReason == ReasonImprovement
	return out
}

// closing maps what ends an episode of each kind to the reason it leaves.
var closing = map[ChangeKind]map[TransitionKind]RegressionReason{
	KindRegression: {RegressionAcknowledged: ReasonAcknowledged, RegressionRecovered: ReasonRecovered,
		RegressionNotConfirmed: ReasonNotConfirmed},
	KindImprovement: {ImprovementAcknowledged: ReasonAcknowledged, ImprovementAdopted: ReasonImprovementAdopted,
		ImprovementEnded: ReasonImprovementEnded, ImprovementNotConfirmed: ReasonNotConfirmed},
}

// side is the reason and message of one kind's condition.
func (r *replay) side(kind ChangeKind) (RegressionReason, string) {
	if e := r.st.Open; e != nil && e.Kind == kind {
		return ReasonRegression.forKind(kind), r.openMessage(e)
	}
	if r.newest < 0 {
		return ReasonNotEnough, r.notEnoughMessage()
	}
	pt := r.points[r.newest]
	for k := len(pt.Transitions) - 1; k >= 0; k-- {
		if reason, ok := closing[kind][pt.Transitions[k].Kind]; ok {
			return reason, pt.Transitions[k].Message
		}
	}
	switch {
	case pt.Outcome == OutcomeNotEnoughHistory:
		return ReasonNotEnough, r.notEnoughMessage()
	case kind == KindImprovement:
		return ReasonNoImprovement, r.levelMessage(r.newest)
	}
	return ReasonNoRegression, r.levelMessage(r.newest)
}

func (reason RegressionReason) forKind(kind ChangeKind) RegressionReason {
	if kind == KindImprovement {
		return ReasonImprovement
	}
	return ReasonRegression
}

// openMessage names an open episode: where it started, how long it has
// held, the newest run against the reference.
func (r *replay) openMessage(e *Episode) string {
	verb := "regressed"
	if e.Kind == KindImprovement {
		verb = "improved"
	}
	if r.p.Method == MethodVerdict {
		return fmt.Sprintf("%s: %s in comparison %s, Δ %+.1f %% against the baseline; %s since comparison %s (release %s, %d comparison%s)",
			r.p.Metric, verdictOf(e.Kind), e.LatestRun, e.DeltaPercent, verdictOf(e.Kind), e.FirstRun, orDash(e.FirstRelease), e.Runs, plural(e.Runs))
	}
	unit := r.h[r.newest].Unit
	msg := fmt.Sprintf("%s %s from run %s (release %s) on: %d run%s so far, the newest (run %s) %+.1f %% against the %s %s %s of the %d runs before it",
		r.p.Metric, verb, e.FirstRun, orDash(e.FirstRelease), e.Runs, plural(e.Runs), e.LatestRun, e.DeltaPercent,
		r.statistic(), FormatNumber(e.Reference), unit, e.ReferenceRuns)
	msg += fmt.Sprintf(" (%s %g %%)", r.marginName(), r.margin())
	if e.Provisional {
		msg += "; provisional: found at the newest run" + plural(e.Runs) + ", to be confirmed by the next runs"
	}
	return msg
}

func verdictOf(k ChangeKind) Verdict {
	if k == KindImprovement {
		return Better
	}
	return Worse
}

func (r *replay) statistic() string {
	if r.p.Method == MethodChangePoint {
		return "mean"
	}
	return "median"
}

func (r *replay) marginName() string {
	if r.p.Method == MethodChangePoint {
		return "minimum effect"
	}
	return "threshold"
}

func (r *replay) notEnoughMessage() string {
	if r.p.Method == MethodVerdict {
		return "no finished comparison yet"
	}
	what := "spec.regression.baselineRuns"
	if r.p.Method == MethodChangePoint && r.need() > r.p.BaselineRuns {
		what = fmt.Sprintf("change-point detection needs at least %d", MinChangePointBaseline)
	}
	if r.newest < 0 {
		return fmt.Sprintf("no valid run yet: a baseline needs %d (%s)", r.need(), what)
	}
	level := "valid runs"
	if r.st.AckedAt != "" {
		level = "runs of the level accepted from run " + r.st.AckedAt + " on"
	}
	return fmt.Sprintf("run %s is not judged: %d of the %d %s a baseline needs came before it (%s)",
		r.h[r.newest].Run, r.points[r.newest].ReferenceRuns, r.need(), level, what)
}

// levelMessage says how the newest run compares with its level.
func (r *replay) levelMessage(i int) string {
	h := r.h[i]
	if r.p.Method == MethodVerdict {
		d := "-"
		if h.Value != nil {
			d = fmt.Sprintf("%+.1f %%", *h.Value)
		}
		return fmt.Sprintf("%s: %s in comparison %s (release %s), Δ %s against the baseline", r.p.Metric, h.Verdict, h.Run, orDash(h.Release), d)
	}
	d := r.points[i].DeltaPercent
	if d == nil {
		return fmt.Sprintf("%s of run %s: no relative change against a level of zero", r.p.Metric, h.Run)
	}
	return fmt.Sprintf("%s of run %s is %+.1f %% against the %s of the %d baseline runs (%s %g %%)", r.p.Metric, h.Run, *d, r.statistic(),
		r.points[i].ReferenceRuns, r.marginName(), r.margin())
}

// FormatNumber prints a figure for people: whole numbers from ten thousand
// up, four significant digits below.
func FormatNumber(v float64) string {
	if math.Abs(v) >= 1e4 && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
