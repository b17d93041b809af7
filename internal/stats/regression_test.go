package stats

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// points is a history of valid runs run-0, run-1, … with releases v0, v1, …
func points(dir Direction, values ...float64) []HistoryPoint {
	out := make([]HistoryPoint, len(values))
	for i, v := range values {
		out[i] = HistoryPoint{Run: fmt.Sprintf("run-%d", i), Release: fmt.Sprintf("v%d", i), Succeeded: true, Value: &v, Unit: "tx/s", Direction: dir}
	}
	return out
}

// with changes point i of a copy of h.
func with(h []HistoryPoint, i int, f func(*HistoryPoint)) []HistoryPoint {
	out := append([]HistoryPoint(nil), h...)
	f(&out[i])
	return out
}

func verdictPoint(run string, succeeded bool, v Verdict, delta float64) HistoryPoint {
	return HistoryPoint{Run: run, Release: "rc", Succeeded: succeeded, Verdict: v, Value: &delta, Unit: "%Δ", Direction: HigherIsBetter}
}

func TestJudgeRegression(t *testing.T) {
	noise := []float64{1000, 1008, 995, 1003, 998, 1006, 992, 1004, 999, 1001, 997, 1005, 1002, 996, 1003, 1000}
	drop := append(append([]float64{}, noise[:10]...), 950, 955, 948, 952, 957, 951)
	rise := append(append([]float64{}, noise[:10]...), 1050, 1055, 1048, 1052, 1057, 1051)
	threshold := RegressionPolicy{Metric: "tps", Method: MethodThreshold, ThresholdPercent: 3, BaselineRuns: 5}
	changePoint := RegressionPolicy{Metric: "tps", Method: MethodChangePoint, MinEffectPercent: 2}
	cases := map[string]struct {
		history []HistoryPoint
		policy  RegressionPolicy
		want    RegressionJudgement
	}{
		"threshold: empty history": {
			policy: threshold,
			want:   RegressionJudgement{Reason: ReasonNotEnough, Message: "0 valid result(s): a baseline needs at least one earlier valid run"},
		},
		"threshold: a failed run's value does not count": {
			history: with(points(HigherIsBetter, 1000, 900), 1, func(p *HistoryPoint) { p.Succeeded = false }),
			policy:  threshold,
			want:    RegressionJudgement{Reason: ReasonNotEnough, Message: "1 valid result(s): a baseline needs at least one earlier valid run"},
		},
		"threshold: noise is no regression": {
			history: points(HigherIsBetter, 1000, 1008, 995, 1003, 998, 1006),
			policy:  threshold,
			want: RegressionJudgement{Reason: ReasonNoRegression,
				Message: "tps of run run-5 is +0.6 % against the median of the 5 baseline runs (threshold 3 %)"},
		},
		"threshold: a 4.5 % drop is a regression": {
			history: points(HigherIsBetter, 1000, 1008, 995, 1003, 998, 1006, 955),
			policy:  threshold,
			want: RegressionJudgement{Regressed: true, Reason: ReasonRegression,
				Message: "tps of run run-6 (release v6) is 955 tx/s, -4.8 % against the median 1003 of the 5 baseline runs (threshold 3 %)"},
		},
		"threshold: a fractional threshold": {
			history: points(HigherIsBetter, 1000, 1000, 980),
			policy:  RegressionPolicy{Metric: "tps", ThresholdPercent: 2.5},
			want: RegressionJudgement{Reason: ReasonNoRegression,
				Message: "tps of run run-2 is -2.0 % against the median of the 2 baseline runs (threshold 2.5 %)"},
		},
		"threshold: lower is better, a rise is the regression": {
			history: points(LowerIsBetter, 10, 10, 11),
			policy:  threshold,
			want: RegressionJudgement{Regressed: true, Reason: ReasonRegression,
				Message: "tps of run run-2 (release v2) is 11 tx/s, +10.0 % against the median 10 of the 2 baseline runs (threshold 3 %)"},
		},
		"threshold: lower is better, a drop is an improvement": {
			history: points(LowerIsBetter, 10, 10, 9),
			policy:  threshold,
			want: RegressionJudgement{Reason: ReasonNoRegression,
				Message: "tps of run run-2 is -10.0 % against the median of the 2 baseline runs (threshold 3 %)"},
		},
		"threshold: only the last baselineRuns earlier runs": {
			history: points(HigherIsBetter, 2000, 1000, 1000, 990),
			policy:  RegressionPolicy{Metric: "tps", ThresholdPercent: 3, BaselineRuns: 2},
			want: RegressionJudgement{Reason: ReasonNoRegression,
				Message: "tps of run run-3 is -1.0 % against the median of the 2 baseline runs (threshold 3 %)"},
		},
		"threshold: runs outside the baseline selector are skipped": {
			history: with(points(HigherIsBetter, 1000, 2000, 1000), 1, func(p *HistoryPoint) { p.OutsideBaseline = true }),
			policy:  threshold,
			want: RegressionJudgement{Reason: ReasonNoRegression,
				Message: "tps of run run-2 is +0.0 % against the median of the 1 baseline runs (threshold 3 %)"},
		},
		"threshold: no run matches the selector": {
			history: with(points(HigherIsBetter, 1000, 900), 0, func(p *HistoryPoint) { p.OutsideBaseline = true }),
			policy:  threshold,
			want:    RegressionJudgement{Reason: ReasonNotEnough, Message: "no earlier valid run matches the baseline selector"},
		},
		"threshold: a zero baseline has no relative change": {
			history: points(HigherIsBetter, 0, 0, 5),
			policy:  threshold,
			want:    RegressionJudgement{Reason: ReasonNotEnough, Message: "the baseline's median is zero: no relative change"},
		},
		"threshold is the default method": {
			history: points(HigherIsBetter, 1000, 900),
			policy:  RegressionPolicy{ThresholdPercent: 5},
			want: RegressionJudgement{Regressed: true, Reason: ReasonRegression,
				Message: "the primary metric of run run-1 (release v1) is 900 tx/s, -10.0 % against the median 1000 of the 1 baseline runs (threshold 5 %)"},
		},
		"change point: too short a history": {
			history: points(HigherIsBetter, noise[:9]...),
			policy:  changePoint,
			want:    RegressionJudgement{Reason: ReasonNotEnough, Message: "9 valid results; change-point detection needs at least 10"},
		},
		"change point: noise has none": {
			history: points(HigherIsBetter, noise...),
			policy:  changePoint,
			want:    RegressionJudgement{Reason: ReasonNoRegression, Message: "no change point in tps over 16 valid results"},
		},
		"change point: a 5 % drop from run-10 on": {
			history: points(HigherIsBetter, drop...),
			policy:  changePoint,
			want: RegressionJudgement{Regressed: true, Reason: ReasonRegression, ChangePoints: []int{10},
				Message: "tps changed by -4.8 % (mean 1001 → 952.2, p 1.9e-12) from run run-10 (release v10) on"},
		},
		"change point: a rise is an improvement": {
			history: points(HigherIsBetter, rise...),
			policy:  changePoint,
			want: RegressionJudgement{Reason: ReasonNoRegression, ChangePoints: []int{10},
				Message: "the latest change point (run run-10, +5.2 %) is an improvement"},
		},
		"change point: indexes are the history's, failed runs between": {
			history: slices.Insert(points(HigherIsBetter, drop...), 5, HistoryPoint{Run: "failed", Value: &drop[0]}),
			policy:  changePoint,
			want: RegressionJudgement{Regressed: true, Reason: ReasonRegression, ChangePoints: []int{11},
				Message: "tps changed by -4.8 % (mean 1001 → 952.2, p 1.9e-12) from run run-10 (release v10) on"},
		},
		"change point: below the minimum effect": {
			history: points(HigherIsBetter, drop...),
			policy:  RegressionPolicy{Metric: "tps", Method: MethodChangePoint, MinEffectPercent: 10},
			want:    RegressionJudgement{Reason: ReasonNoRegression, Message: "no change point in tps over 16 valid results"},
		},
		"verdict: no finished comparison": {
			history: []HistoryPoint{verdictPoint("c1", false, Worse, -10)},
			policy:  RegressionPolicy{Metric: "tps", Method: MethodVerdict},
			want:    RegressionJudgement{Reason: ReasonNotEnough, Message: "no finished comparison yet"},
		},
		"verdict: the newest comparison's Worse": {
			history: []HistoryPoint{verdictPoint("c1", true, Better, 5), verdictPoint("c2", true, Worse, -10)},
			policy:  RegressionPolicy{Metric: "tps", Method: MethodVerdict},
			want: RegressionJudgement{Regressed: true, Reason: ReasonRegression,
				Message: "tps: Worse in comparison c2 (release rc), Δ -10.0 % against the baseline"},
		},
		"verdict: a later failed comparison does not clear it": {
			history: []HistoryPoint{verdictPoint("c1", true, Worse, -10), verdictPoint("c2", false, NoChange, 0)},
			policy:  RegressionPolicy{Metric: "tps", Method: MethodVerdict},
			want: RegressionJudgement{Regressed: true, Reason: ReasonRegression,
				Message: "tps: Worse in comparison c1 (release rc), Δ -10.0 % against the baseline"},
		},
		"verdict: Inconclusive is no regression": {
			history: []HistoryPoint{verdictPoint("c1", true, Inconclusive, -1)},
			policy:  RegressionPolicy{Metric: "tps", Method: MethodVerdict},
			want: RegressionJudgement{Reason: ReasonNoRegression,
				Message: "tps: Inconclusive in comparison c1 (release rc), Δ -1.0 % against the baseline"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := JudgeRegression(tc.history, tc.policy)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("JudgeRegression (-want +got):\n%s", diff)
			}
		})
	}
}
