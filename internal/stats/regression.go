package stats

import (
	"fmt"
	"math"
)

// The regression judgement of a schedule: given its history of finished
// runs (oldest first) and a policy, is the newest result a regression? Pure:
// the BenchmarkSchedule controller turns the answer into a condition, an
// event and a metric.

// RegressionMethod says how the history is judged.
type RegressionMethod string

const (
	// MethodThreshold compares the newest valid value with the median of
	// the baseline values before it.
	MethodThreshold RegressionMethod = "Threshold"
	// MethodChangePoint looks for change points over the valid values.
	MethodChangePoint RegressionMethod = "ChangePoint"
	// MethodVerdict takes the newest comparison's verdict on the watched
	// metric: the comparison has done the statistics already.
	MethodVerdict RegressionMethod = "Verdict"
)

// RegressionReason is the outcome in one word.
type RegressionReason string

const (
	ReasonRegression   RegressionReason = "Regression"
	ReasonNoRegression RegressionReason = "NoRegression"
	ReasonNotEnough    RegressionReason = "NotEnoughHistory"
)

// MinChangePointHistory is the fewest valid values change-point detection
// judges (two segments of the default minimum length).
const MinChangePointHistory = 10

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
	// OutsideBaseline: the policy's baseline selector leaves this run out.
	OutsideBaseline bool
}

// RegressionPolicy is what counts as a regression.
type RegressionPolicy struct {
	// Metric names the watched metric in messages.
	Metric           string
	Method           RegressionMethod
	ThresholdPercent float64
	MinEffectPercent float64
	// BaselineRuns is how many earlier valid runs form the baseline; default 5.
	BaselineRuns int
}

// RegressionJudgement is the answer.
type RegressionJudgement struct {
	Regressed bool
	Reason    RegressionReason
	Message   string
	// ChangePoints are indexes into the history of the runs that start a
	// new level (ChangePoint method only).
	ChangePoints []int
}

// JudgeRegression judges the history by the policy's method.
func JudgeRegression(history []HistoryPoint, p RegressionPolicy) RegressionJudgement {
	if p.Metric == "" {
		p.Metric = "the primary metric"
	}
	switch p.Method {
	case MethodVerdict:
		return judgeVerdicts(history, p)
	case MethodChangePoint:
		return judgeChangePoints(history, p)
	default:
		return judgeThreshold(history, p)
	}
}

// validIndexes are the points of valid runs with a value.
func validIndexes(history []HistoryPoint) []int {
	var out []int
	for i, h := range history {
		if h.Succeeded && h.Value != nil {
			out = append(out, i)
		}
	}
	return out
}

// worseFn says whether a change is for the worse, in the direction of the
// newest valid point (higher is better when unknown).
func worseFn(history []HistoryPoint, valid []int) func(delta float64) bool {
	lower := len(valid) > 0 && history[valid[len(valid)-1]].Direction == LowerIsBetter
	return func(delta float64) bool {
		if lower {
			return delta > 0
		}
		return delta < 0
	}
}

func judgeVerdicts(history []HistoryPoint, p RegressionPolicy) RegressionJudgement {
	for i := len(history) - 1; i >= 0; i-- {
		h := history[i]
		if !h.Succeeded || h.Verdict == "" {
			continue
		}
		delta := "-"
		if h.Value != nil {
			delta = fmt.Sprintf("%+.1f %%", *h.Value)
		}
		msg := fmt.Sprintf("%s: %s in comparison %s (release %s), Δ %s against the baseline", p.Metric, h.Verdict, h.Run, orDash(h.Release), delta)
		if h.Verdict == Worse {
			return RegressionJudgement{Regressed: true, Reason: ReasonRegression, Message: msg}
		}
		return RegressionJudgement{Reason: ReasonNoRegression, Message: msg}
	}
	return RegressionJudgement{Reason: ReasonNotEnough, Message: "no finished comparison yet"}
}

func judgeChangePoints(history []HistoryPoint, p RegressionPolicy) RegressionJudgement {
	valid := validIndexes(history)
	if len(valid) < MinChangePointHistory {
		return RegressionJudgement{Reason: ReasonNotEnough,
			Message: fmt.Sprintf("%d valid results; change-point detection needs at least %d", len(valid), MinChangePointHistory)}
	}
	series := make([]float64, len(valid))
	for k, i := range valid {
		series[k] = *history[i].Value
	}
	cps := ChangePoints(series, ChangePointOptions{MinEffectPercent: p.MinEffectPercent})
	out := RegressionJudgement{}
	for _, cp := range cps {
		out.ChangePoints = append(out.ChangePoints, valid[cp.Index])
	}
	if len(cps) == 0 {
		out.Reason, out.Message = ReasonNoRegression, fmt.Sprintf("no change point in %s over %d valid results", p.Metric, len(valid))
		return out
	}
	last := cps[len(cps)-1]
	h := history[valid[last.Index]]
	if worseFn(history, valid)(last.DeltaPercent) {
		out.Regressed, out.Reason = true, ReasonRegression
		out.Message = fmt.Sprintf("%s changed by %+.1f %% (mean %.4g → %.4g, p %.2g) from run %s (release %s) on",
			p.Metric, last.DeltaPercent, last.Before.Mean, last.After.Mean, last.P, h.Run, orDash(h.Release))
		return out
	}
	out.Reason = ReasonNoRegression
	out.Message = fmt.Sprintf("the latest change point (run %s, %+.1f %%) is an improvement", h.Run, last.DeltaPercent)
	return out
}

func judgeThreshold(history []HistoryPoint, p RegressionPolicy) RegressionJudgement {
	valid := validIndexes(history)
	if len(valid) < 2 {
		return RegressionJudgement{Reason: ReasonNotEnough,
			Message: fmt.Sprintf("%d valid result(s): a baseline needs at least one earlier valid run", len(valid))}
	}
	newest := history[valid[len(valid)-1]]
	n := p.BaselineRuns
	if n <= 0 {
		n = 5
	}
	var baseline []float64
	for k := len(valid) - 2; k >= 0 && len(baseline) < n; k-- {
		if h := history[valid[k]]; !h.OutsideBaseline {
			baseline = append(baseline, *h.Value)
		}
	}
	if len(baseline) == 0 {
		return RegressionJudgement{Reason: ReasonNotEnough, Message: "no earlier valid run matches the baseline selector"}
	}
	med := Summarize(baseline).Median
	if med == 0 {
		return RegressionJudgement{Reason: ReasonNotEnough, Message: "the baseline's median is zero: no relative change"}
	}
	delta := 100 * (*newest.Value - med) / math.Abs(med)
	if worseFn(history, valid)(delta) && math.Abs(delta) >= p.ThresholdPercent {
		return RegressionJudgement{Regressed: true, Reason: ReasonRegression,
			Message: fmt.Sprintf("%s of run %s (release %s) is %.4g %s, %+.1f %% against the median %.4g of the %d baseline runs (threshold %g %%)",
				p.Metric, newest.Run, orDash(newest.Release), *newest.Value, newest.Unit, delta, med, len(baseline), p.ThresholdPercent)}
	}
	return RegressionJudgement{Reason: ReasonNoRegression,
		Message: fmt.Sprintf("%s of run %s is %+.1f %% against the median of the %d baseline runs (threshold %g %%)",
			p.Metric, newest.Run, delta, len(baseline), p.ThresholdPercent)}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
