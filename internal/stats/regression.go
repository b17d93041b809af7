package stats

import (
	"fmt"
	"math"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// The regression judgement of a schedule. A detected change is a state with
// a lifecycle, as change-point services keep it (Apache Otava, MongoDB's
// change-point detection, Bencher's alerts): a regression opens at the run
// that introduced it, the level before it stays the reference while it is
// open (the regressed runs never become their own baseline), later runs that
// are still worse confirm it, and it closes only when a run is back within
// the threshold of that reference (Recovered) or when a person acknowledges
// the new level (Acknowledged). Improvements are the same, apart: they open
// their own episode and are adopted as the new baseline once they have held
// for baselineRuns runs.
//
// JudgeRegression replays the history point by point, oldest first, from a
// carried state (what the schedule kept of points its bounded history no
// longer holds): the same history and acknowledgements give the same answer
// wherever and however often it is computed. Pure: the BenchmarkSchedule
// controller turns the answer into conditions, events, marks and metrics.

// RegressionMethod says how the history is judged: the API's methods, and
// one of the schedule's own for a history of comparisons (MethodVerdict),
// which no spec names.
type RegressionMethod = benchv1.RegressionMethod

const (
	// MethodThreshold compares each valid value with the median of the
	// baseline values before it.
	MethodThreshold = benchv1.RegressionThreshold
	// MethodChangePoint tests the newest values against the level before
	// them: a few newest points by a prediction test (provisional at one or
	// two points), longer stretches by E-divisive means.
	MethodChangePoint = benchv1.RegressionChangePoint
	// MethodVerdict takes each comparison's verdict on the watched metric:
	// the comparison has done the statistics already.
	MethodVerdict RegressionMethod = "Verdict"
)

// RegressionReason is the outcome in one word: the reason of the schedule's
// Regressed or Improved condition.
type RegressionReason string

const (
	ReasonRegression   RegressionReason = "Regression"
	ReasonNoRegression RegressionReason = "NoRegression"
	ReasonNotEnough    RegressionReason = "NotEnoughHistory"
	// ReasonRecovered: the newest run is back within the threshold of the
	// level before the regression.
	ReasonRecovered RegressionReason = "Recovered"
	// ReasonAcknowledged: a person accepted the new level at the newest run.
	ReasonAcknowledged RegressionReason = "Acknowledged"
	// ReasonNotConfirmed: a provisional change (one or two points) was not
	// borne out by the runs after it.
	ReasonNotConfirmed RegressionReason = "NotConfirmed"
	ReasonImprovement  RegressionReason = "Improvement"
	// ReasonNoImprovement: no improvement is open.
	ReasonNoImprovement RegressionReason = "NoImprovement"
	// ReasonImprovementAdopted: an improvement held for baselineRuns runs
	// and is now the baseline.
	ReasonImprovementAdopted RegressionReason = "ImprovementAdopted"
	// ReasonImprovementEnded: the newest run is no longer better.
	ReasonImprovementEnded RegressionReason = "ImprovementEnded"
)

// MinChangePointBaseline is the fewest valid values the ChangePoint method
// judges against (the minimum segment of E-divisive).
const MinChangePointBaseline = 5

// changePointWindow is the most values of the accepted level the ChangePoint
// method keeps (at least baselineRuns): E-divisive costs the square of it.
const changePointWindow = 20

// HistoryPoint is one finished run (or comparison) of a schedule.
type HistoryPoint struct {
	Run, Release string
	// Succeeded: the run was valid; only those values count.
	Succeeded bool
	// Value of the watched metric; nil when the run has none. For a
	// comparison, Δ % of the candidate against the baseline.
	Value     *float64
	Unit      string
	Direction Direction
	// Verdict of the watched metric, for comparisons.
	Verdict Verdict
	// OutsideBaseline: the policy's baseline selector leaves this run out
	// of the baseline (it is judged, never judged against).
	OutsideBaseline bool
	// Ack is a person's acknowledgement taking effect after this point (the
	// newest run when they made it).
	Ack *Acknowledgement
}

// Acknowledgement accepts the level of the open regression (or
// improvement): the runs from From on become the baseline.
type Acknowledgement struct {
	// From is the run where the accepted level starts; "" for the first
	// run of the open change.
	From   string
	By     string
	Reason string
	At     time.Time
}

// RegressionPolicy is what counts as a regression.
type RegressionPolicy struct {
	// Metric names the watched metric in messages.
	Metric           string
	Method           RegressionMethod
	ThresholdPercent float64
	MinEffectPercent float64
	// BaselineRuns is how many valid runs form the baseline; default 5.
	BaselineRuns int
	// Start is the state before the first point of the history (what the
	// schedule carried of the points it dropped); nil starts afresh.
	Start *LevelState
}

// ChangeKind is the direction of an episode: the API's.
type ChangeKind = benchv1.ChangeKind

const (
	KindRegression  = benchv1.ChangeRegression
	KindImprovement = benchv1.ChangeImprovement
)

// LevelPoint is one valid value of a level.
type LevelPoint struct {
	Run, Release string
	Value        float64
}

// Episode is an open regression or improvement.
type Episode struct {
	Kind                   ChangeKind
	FirstRun, FirstRelease string
	// Reference is the level it is measured against: the baseline's median
	// (Threshold) or mean (ChangePoint), over ReferenceRuns runs.
	Reference     float64
	ReferenceRuns int
	// DeltaPercent of the newest run against Reference.
	DeltaPercent float64
	// Runs counts the valid runs of the episode, the first included.
	Runs      int
	LatestRun string
	// Provisional: found at the newest one or two runs (ChangePoint), not
	// confirmed yet.
	Provisional bool
	// Values are the newest runs of the episode: the new level, should it
	// be acknowledged or adopted.
	Values []LevelPoint
}

// LevelState is what the replay carries from one point to the next.
type LevelState struct {
	// Baseline holds the newest valid values of the accepted level: those
	// the next run is judged against. While an episode is open it is frozen
	// (the reference of the episode).
	Baseline []LevelPoint
	// AckedAt names the run where the newest acknowledgement or adoption
	// started the accepted level ("" when none), for messages.
	AckedAt string
	Open    *Episode
}

// Outcome is the judgement of one history point: the API's.
type Outcome = benchv1.HistoryJudgement

const (
	OutcomeNotEnoughHistory = benchv1.JudgedNotEnoughHistory
	OutcomeNoRegression     = benchv1.JudgedNoRegression
	OutcomeRegression       = benchv1.JudgedRegression
	OutcomeImprovement      = benchv1.JudgedImprovement
)

// TransitionKind is what changed at a point.
type TransitionKind string

const (
	RegressionOpened        TransitionKind = "RegressionOpened"
	RegressionConfirmed     TransitionKind = "RegressionConfirmed"
	RegressionRecovered     TransitionKind = "RegressionRecovered"
	RegressionNotConfirmed  TransitionKind = "RegressionNotConfirmed"
	RegressionAcknowledged  TransitionKind = "RegressionAcknowledged"
	ImprovementOpened       TransitionKind = "ImprovementOpened"
	ImprovementConfirmed    TransitionKind = "ImprovementConfirmed"
	ImprovementAdopted      TransitionKind = "ImprovementAdopted"
	ImprovementEnded        TransitionKind = "ImprovementEnded"
	ImprovementNotConfirmed TransitionKind = "ImprovementNotConfirmed"
	ImprovementAcknowledged TransitionKind = "ImprovementAcknowledged"
)

// Transition is one change of state, with a sentence for people.
type Transition struct {
	Kind    TransitionKind
	Message string
}

// PointJudgement is what the replay said of one point. Points that were not
// judged (failed runs, no value) have no Outcome.
type PointJudgement struct {
	Outcome Outcome
	// DeltaPercent against the level the point was judged against, of
	// ReferenceRuns runs.
	DeltaPercent  *float64
	ReferenceRuns int
	// ChangePoint: the first run of a new level (a regression or an
	// improvement), whatever the method.
	ChangePoint bool
	Provisional bool
	// Acknowledged: an acknowledgement took effect after this point.
	Acknowledged bool
	Transitions  []Transition
}

// RegressionJudgement is the answer.
type RegressionJudgement struct {
	Regressed bool
	Reason    RegressionReason
	Message   string
	// Improved, ImprovedReason and ImprovedMessage say the same of
	// improvements, never mixed with regressions.
	Improved        bool
	ImprovedReason  RegressionReason
	ImprovedMessage string
	// Open is the episode in progress, if any.
	Open *Episode
	// State after the newest point.
	State LevelState
	// Points are one per history point.
	Points []PointJudgement
	// ChangePoints are indexes into the history of the points that opened
	// the episodes (Points[i].ChangePoint), oldest first.
	ChangePoints []int
}

// JudgeRegression judges the history by the policy's method.
func JudgeRegression(history []HistoryPoint, p RegressionPolicy) RegressionJudgement {
	if p.Metric == "" {
		p.Metric = "the primary metric"
	}
	if p.BaselineRuns <= 0 {
		p.BaselineRuns = 5
	}
	r := newReplay(history, p)
	r.run()
	return r.result()
}

// worseFn says whether a change is for the worse, in the direction of the
// newest valid point (higher is better when unknown).
func worseFn(history []HistoryPoint) func(delta float64) bool {
	lower := false
	for i := len(history) - 1; i >= 0; i-- {
		if h := history[i]; h.Succeeded && h.Value != nil {
			lower = h.Direction == LowerIsBetter
			break
		}
	}
	return func(delta float64) bool {
		if lower {
			return delta > 0
		}
		return delta < 0
	}
}

func relDelta(v, ref float64) float64 {
	if ref == 0 {
		return math.NaN()
	}
	return 100 * (v - ref) / math.Abs(ref)
}

func values(ps []LevelPoint) []float64 {
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = p.Value
	}
	return out
}

// keepNewest appends p and keeps the newest n points.
func keepNewest(ps []LevelPoint, n int, p ...LevelPoint) []LevelPoint {
	ps = append(append([]LevelPoint(nil), ps...), p...)
	if len(ps) > n {
		ps = ps[len(ps)-n:]
	}
	return ps
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func ptrTo(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Clone copies a state deeply, so that a carried state is never shared.
func (s LevelState) Clone() LevelState {
	out := LevelState{Baseline: append([]LevelPoint(nil), s.Baseline...), AckedAt: s.AckedAt}
	if s.Open != nil {
		e := *s.Open
		e.Values = append([]LevelPoint(nil), s.Open.Values...)
		out.Open = &e
	}
	return out
}

// word names a change kind in a sentence.
func word(k ChangeKind) string {
	if k == KindImprovement {
		return "improvement"
	}
	return "regression"
}

// describe names an episode in a sentence: "the regression from run X
// (release v5, -42.4 %, 3 runs)".
func (e *Episode) describe() string {
	return fmt.Sprintf("the %s from run %s (release %s, %+.1f %%, %d run%s)", word(e.Kind), e.FirstRun, orDash(e.FirstRelease),
		e.DeltaPercent, e.Runs, plural(e.Runs))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
