package schedule

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/metrics"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/status"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// The schedule's regression judgement, outside stats.JudgeRegression: its
// inputs (the history, the acknowledgements, the state carried over the
// entries historyLimit dropped) and its outputs (the history's marks,
// status.regression, the Regressed, Improved and Acknowledged conditions,
// the events of each transition, the metric). Everything here is computed
// from what status and the annotation hold, so a restarted manager, a
// retried reconcile or a refused write all come to the same answer.

// judge replays the history (with the acknowledgements), marks it, bounds
// it, and sets the conditions; it returns the events of the transitions
// between what status held and what it holds now.
func (r *Reconciler) judge(s *benchv1.BenchmarkSchedule) []status.Event {
	before := s.Status.DeepCopy()
	p := s.Spec.Regression
	if p == nil {
		boundHistory(s)
		return nil
	}
	acks, ackErr := benchv1.Acknowledgements(s.Annotations)
	policy := regressionPolicy(s)
	points := historyPoints(s, acks)
	j := stats.JudgeRegression(points, policy)
	markHistory(s, j, acks)
	if s.Status.Regression == nil {
		s.Status.Regression = &benchv1.RegressionStatus{}
	}
	reg := s.Status.Regression
	if n := boundHistory(s); n > 0 {
		// The dropped entries' state is carried, so that a regression older
		// than the history is never forgotten.
		st := stats.JudgeRegression(points[:n], policy).State
		reg.Carried = &benchv1.RegressionLevel{Baseline: levelToAPI(st.Baseline), AcceptedFrom: st.AckedAt, Open: episodeToAPI(st.Open)}
	}
	reg.Open = episodeToAPI(j.State.Open)
	reg.Baseline = levelToAPI(j.State.Baseline)

	setScheduleCondition(s, benchv1.ConditionRegressed, j.Regressed, regressionReason(j.Reason), j.Message)
	setScheduleCondition(s, benchv1.ConditionImproved, j.Improved, regressionReason(j.ImprovedReason), j.ImprovedMessage)
	noteAcknowledgements(s, acks, ackErr, j)
	metrics.ScheduleRegressed(s, j.Regressed)
	return transitions(before, &s.Status)
}

// transitions compares the conditions before and after: a regression or an
// improvement opened (a new one: another first run), or closed and why; an
// acknowledgement made. The counters of status.regression count the opened.
func transitions(before, after *benchv1.BenchmarkScheduleStatus) []status.Event {
	var out []status.Event
	for _, kind := range []struct {
		cond, open string
		change     benchv1.ChangeKind
		eventType  string
		count      *int64
	}{
		{benchv1.ConditionRegressed, benchv1.ReasonRegression, benchv1.ChangeRegression, corev1.EventTypeWarning, &after.Regression.RegressionsDetected},
		{benchv1.ConditionImproved, benchv1.ReasonImprovement, benchv1.ChangeImprovement, corev1.EventTypeNormal, &after.Regression.ImprovementsDetected},
	} {
		was := meta.FindStatusCondition(before.Conditions, kind.cond)
		now := meta.FindStatusCondition(after.Conditions, kind.cond)
		wasOpen := was != nil && was.Status == metav1.ConditionTrue
		nowOpen := now != nil && now.Status == metav1.ConditionTrue
		switch {
		case nowOpen && (!wasOpen || firstRun(before, kind.change) != firstRun(after, kind.change)):
			*kind.count++
			out = append(out, status.Event{Type: kind.eventType, Reason: kind.open, Message: now.Message})
		case wasOpen && !nowOpen && now != nil:
			out = append(out, status.Event{Type: corev1.EventTypeNormal, Reason: now.Reason, Message: now.Message})
		}
	}
	// An acknowledgement that closed a change is said by that change's
	// event; one that found nothing open is said on its own.
	for _, e := range out {
		if e.Reason == benchv1.ReasonAcknowledged {
			return out
		}
	}
	was := meta.FindStatusCondition(before.Conditions, benchv1.ConditionAcknowledged)
	if now := meta.FindStatusCondition(after.Conditions, benchv1.ConditionAcknowledged); now != nil && now.Status == metav1.ConditionTrue &&
		(was == nil || was.Status != metav1.ConditionTrue || was.Message != now.Message) {
		out = append(out, status.Event{Type: corev1.EventTypeNormal, Reason: benchv1.ReasonAcknowledged, Message: now.Message})
	}
	return out
}

func firstRun(st *benchv1.BenchmarkScheduleStatus, kind benchv1.ChangeKind) string {
	if st.Regression == nil || st.Regression.Open == nil || st.Regression.Open.Kind != kind {
		return ""
	}
	return st.Regression.Open.FirstRun
}

func setScheduleCondition(s *benchv1.BenchmarkSchedule, t string, on bool, reason, msg string) {
	cs := metav1.ConditionFalse
	if on {
		cs = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: t, Status: cs, Reason: reason,
		Message: status.Truncate(msg, 1024), ObservedGeneration: s.Generation})
}

// boundHistory drops the oldest entries beyond spec.historyLimit and says
// how many it dropped.
func boundHistory(s *benchv1.BenchmarkSchedule) int {
	limit := int(s.Spec.HistoryLimit)
	if limit <= 0 {
		limit = 100
	}
	n := len(s.Status.History) - limit
	if n <= 0 {
		return 0
	}
	s.Status.History = s.Status.History[n:]
	return n
}

// markHistory writes the judgement of each entry into the history.
func markHistory(s *benchv1.BenchmarkSchedule, j stats.RegressionJudgement, acks []benchv1.Acknowledgement) {
	for i := range s.Status.History {
		h, pt := &s.Status.History[i], j.Points[i]
		h.Judgement = pt.Outcome
		h.DeltaPercent = nil
		if pt.DeltaPercent != nil {
			h.DeltaPercent = status.Finite(*pt.DeltaPercent)
		}
		h.ChangePoint, h.Provisional = pt.ChangePoint, pt.Provisional
		h.Transitions = nil
		for _, t := range pt.Transitions {
			if len(h.Transitions) < 8 {
				h.Transitions = append(h.Transitions, string(t.Kind))
			}
		}
		h.Acknowledged = ""
		if pt.Acknowledged {
			if a, ok := ackOf(acks, h.Run); ok {
				h.Acknowledged = status.Truncate(a.String(), 1024)
			}
		}
	}
}

// finiteOrZero is v, or 0 when it is not finite (status cannot hold it).
func finiteOrZero(v float64) float64 {
	if f := status.Finite(v); f != nil {
		return *f
	}
	return 0
}

// ackOf is the newest acknowledgement made at a run.
func ackOf(acks []benchv1.Acknowledgement, run string) (benchv1.Acknowledgement, bool) {
	var out benchv1.Acknowledgement
	found := false
	for _, a := range acks {
		if a.Run == run && (!found || !a.At.Before(&out.At)) {
			out, found = a, true
		}
	}
	return out, found
}

// noteAcknowledgements turns the annotation into the condition
// Acknowledged, as rejections become a run's Rejected: True with the
// newest's who, when and why (and whether there was a change for it to
// accept); False once undone or unreadable; untouched when none was made.
func noteAcknowledgements(s *benchv1.BenchmarkSchedule, acks []benchv1.Acknowledgement, err error, j stats.RegressionJudgement) {
	had := meta.FindStatusCondition(s.Status.Conditions, benchv1.ConditionAcknowledged) != nil
	switch {
	case err != nil:
		meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: benchv1.ConditionAcknowledged, Status: metav1.ConditionFalse,
			Reason: benchv1.ReasonUnreadable, Message: status.Truncate(err.Error(), 1024), ObservedGeneration: s.Generation})
	case len(acks) > 0:
		newest := acks[0]
		for _, a := range acks[1:] {
			if !a.At.Before(&newest.At) {
				newest = a
			}
		}
		msg := newest.String()
		for i, h := range s.Status.History {
			if h.Run == newest.Run && !j.Points[i].Acknowledged {
				msg += "; nothing was open after that run to accept"
			}
		}
		if len(acks) > 1 {
			msg += fmt.Sprintf(" (%d acknowledgements in all)", len(acks))
		}
		meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: benchv1.ConditionAcknowledged, Status: metav1.ConditionTrue,
			Reason: benchv1.ReasonAcknowledgedByPerson, Message: status.Truncate(msg, 1024), ObservedGeneration: s.Generation})
	case had:
		meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: benchv1.ConditionAcknowledged, Status: metav1.ConditionFalse,
			Reason: benchv1.ReasonNotAcknowledged, Message: "every acknowledgement was undone", ObservedGeneration: s.Generation})
	}
}

// historyPoints is the history as the judgement sees it; a run whose
// release label the baseline selector does not match is outside the
// baseline; an acknowledgement takes effect after the run it names.
func historyPoints(s *benchv1.BenchmarkSchedule, acks []benchv1.Acknowledgement) []stats.HistoryPoint {
	sel := labels.Everything()
	if p := s.Spec.Regression; p != nil && p.BaselineSelector != nil {
		if ls, err := metav1.LabelSelectorAsSelector(p.BaselineSelector); err == nil {
			sel = ls
		}
	}
	out := make([]stats.HistoryPoint, len(s.Status.History))
	for i, h := range s.Status.History {
		out[i] = stats.HistoryPoint{Run: h.Run, Release: h.Release, Succeeded: h.Phase == benchv1.PhaseSucceeded,
			Value: h.Value, Unit: h.Unit, Direction: h.Direction, Verdict: h.Verdict,
			OutsideBaseline: !sel.Matches(labels.Set{benchv1.LabelRelease: h.Release})}
		if a, ok := ackOf(acks, h.Run); ok {
			out[i].Ack = &stats.Acknowledgement{From: a.From, By: a.By, Reason: a.Reason, At: a.At.Time}
		}
	}
	return out
}

// regressionPolicy converts the API's policy; a schedule of comparisons
// takes the comparisons' verdicts. The state carried over dropped entries
// is where the replay starts.
func regressionPolicy(s *benchv1.BenchmarkSchedule) stats.RegressionPolicy {
	p := s.Spec.Regression
	out := stats.RegressionPolicy{Metric: p.Metric, ThresholdPercent: float64(p.ThresholdPercent),
		MinEffectPercent: float64(p.MinEffectPercent), BaselineRuns: int(p.BaselineRuns)}
	switch {
	case s.Spec.ComparisonTemplate != nil:
		out.Method = stats.MethodVerdict
	case method(p) == benchv1.RegressionChangePoint:
		out.Method = stats.MethodChangePoint
	default:
		out.Method = stats.MethodThreshold
	}
	if reg := s.Status.Regression; reg != nil && reg.Carried != nil {
		out.Start = &stats.LevelState{Baseline: levelFromAPI(reg.Carried.Baseline), AckedAt: reg.Carried.AcceptedFrom,
			Open: episodeFromAPI(reg.Carried.Open)}
	}
	return out
}

func regressionReason(r stats.RegressionReason) string {
	switch r {
	case stats.ReasonRegression:
		return benchv1.ReasonRegression
	case stats.ReasonNoRegression:
		return benchv1.ReasonNoRegression
	case stats.ReasonRecovered:
		return benchv1.ReasonRecovered
	case stats.ReasonAcknowledged:
		return benchv1.ReasonAcknowledged
	case stats.ReasonNotConfirmed:
		return benchv1.ReasonNotConfirmed
	case stats.ReasonImprovement:
		return benchv1.ReasonImprovement
	case stats.ReasonNoImprovement:
		return benchv1.ReasonNoImprovement
	case stats.ReasonImprovementAdopted:
		return benchv1.ReasonImprovementAdopted
	case stats.ReasonImprovementEnded:
		return benchv1.ReasonImprovementEnded
	default:
		return benchv1.ReasonNotEnoughHistory
	}
}

func method(p *benchv1.RegressionPolicy) benchv1.RegressionMethod {
	if p.Method == "" {
		return benchv1.RegressionThreshold
	}
	return p.Method
}

func levelToAPI(ps []stats.LevelPoint) []benchv1.LevelValue {
	var out []benchv1.LevelValue
	for _, p := range ps {
		out = append(out, benchv1.LevelValue{Run: p.Run, Release: p.Release, Value: p.Value})
	}
	return out
}

func levelFromAPI(ps []benchv1.LevelValue) []stats.LevelPoint {
	var out []stats.LevelPoint
	for _, p := range ps {
		out = append(out, stats.LevelPoint{Run: p.Run, Release: p.Release, Value: p.Value})
	}
	return out
}

func episodeToAPI(e *stats.Episode) *benchv1.RegressionEpisode {
	if e == nil {
		return nil
	}
	return &benchv1.RegressionEpisode{Kind: e.Kind, FirstRun: e.FirstRun, FirstRelease: e.FirstRelease,
		Reference: e.Reference, ReferenceRuns: int32(e.ReferenceRuns), DeltaPercent: finiteOrZero(e.DeltaPercent), Runs: int32(e.Runs),
		LatestRun: e.LatestRun, Provisional: e.Provisional, Values: levelToAPI(e.Values)}
}

func episodeFromAPI(e *benchv1.RegressionEpisode) *stats.Episode {
	if e == nil {
		return nil
	}
	return &stats.Episode{Kind: e.Kind, FirstRun: e.FirstRun, FirstRelease: e.FirstRelease,
		Reference: e.Reference, ReferenceRuns: int(e.ReferenceRuns), DeltaPercent: e.DeltaPercent, Runs: int(e.Runs),
		LatestRun: e.LatestRun, Provisional: e.Provisional, Values: levelFromAPI(e.Values)}
}

// setLatest sets the newest finished run's or comparison's one verdict and
// its headline (status.latestVerdict, status.latestHeadline), from what it
// and the judgement just made hold: the newest is the history's last
// entry (the history is in the order the runs ended within a second).
func setLatest(s *benchv1.BenchmarkSchedule, owned []scheduled) {
	if len(s.Status.History) == 0 {
		return
	}
	e := s.Status.History[len(s.Status.History)-1]
	verdict, headline := runVerdict(s, e)
	for _, o := range owned {
		if c := o.fromComp; c != nil && c.Name == e.Run {
			verdict, headline = c.Status.Verdict, c.Status.Headline
			if verdict == "" {
				verdict, headline = benchv1.OverallInvalid, fmt.Sprintf("%s %s: nothing compared", c.Name, e.Phase)
			}
		}
	}
	s.Status.LatestVerdict, s.Status.LatestHeadline = verdict, status.Truncate(headline, 1024)
}

// runVerdict is a run schedule's verdict of one of its runs: its history
// entry's judgement, said with the watched metric against its level.
func runVerdict(s *benchv1.BenchmarkSchedule, e benchv1.HistoryEntry) (benchv1.OverallVerdict, string) {
	if e.Phase != benchv1.PhaseSucceeded {
		return benchv1.OverallInvalid, fmt.Sprintf("%s %s: not judged", e.Run, e.Phase)
	}
	if e.Value == nil {
		return benchv1.OverallInconclusive, fmt.Sprintf("%s: no value of the watched metric", e.Run)
	}
	figure := fmt.Sprintf("%s %s %s", e.Run, strconv.FormatFloat(*e.Value, 'g', 5, 64), e.Unit)
	if e.DeltaPercent != nil {
		figure += fmt.Sprintf(", %+.1f %% against its level", *e.DeltaPercent)
	}
	// An open change is said by its condition's message, else the figure.
	open := func(cond string, v benchv1.OverallVerdict, word string) (benchv1.OverallVerdict, string) {
		if c := meta.FindStatusCondition(s.Status.Conditions, cond); c != nil && c.Status == metav1.ConditionTrue {
			return v, word + " — " + c.Message
		}
		return v, word + " — " + figure
	}
	switch e.Judgement {
	case benchv1.JudgedRegression:
		return open(benchv1.ConditionRegressed, benchv1.OverallRegression, "REGRESSION")
	case benchv1.JudgedImprovement:
		return open(benchv1.ConditionImproved, benchv1.OverallImprovement, "IMPROVEMENT")
	case benchv1.JudgedNoRegression:
		return benchv1.OverallPass, "PASS — " + figure
	case benchv1.JudgedNotEnoughHistory:
		return benchv1.OverallInconclusive, "INCONCLUSIVE — " + figure + " (not enough history yet)"
	}
	return benchv1.OverallInconclusive, "INCONCLUSIVE — " + figure + " (no regression policy)"
}

// leadWithHeadline begins a comparison schedule's events of a regression
// or an improvement with the newest comparison's headline: the alert says
// what changed first, then the schedule's judgement of it.
func leadWithHeadline(s *benchv1.BenchmarkSchedule, events []status.Event) []status.Event {
	if s.Spec.ComparisonTemplate == nil || s.Status.LatestHeadline == "" {
		return events
	}
	for i, e := range events {
		if e.Reason == benchv1.ReasonRegression || e.Reason == benchv1.ReasonImprovement {
			events[i].Message = s.Status.LatestHeadline + " — " + e.Message
		}
	}
	return events
}
