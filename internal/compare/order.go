package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// OrderRow is a headline row's test for an order effect: a trend across
// each side's measurements in the order they ran (a comparison's runs in
// their order, each run's repetitions in theirs), by Mann-Kendall
// (stats.MannKendall). Repetitions on one schema are not exchangeable when
// the data grows or ages between them (HammerDB users report TPM falling
// 104k → 77k → 68k over three runs on one schema); a trend is flagged as
// what it is, not counted as noise.
type OrderRow struct {
	Baseline  TrendSide `json:"baseline"`
	Candidate TrendSide `json:"candidate"`
	// Flag says which sides trend, in words; empty when neither does.
	Flag string `json:"flag,omitempty"`
}

// TrendSide is one side's trend test: τ, its p-value (exact without
// ties), Holm-adjusted over every headline side of the report, and
// Sen's slope in percent of the median per measurement.
type TrendSide struct {
	N            int  `json:"n"`
	Tau          Num  `json:"tau"`
	P            Num  `json:"p"`
	PAdjusted    Num  `json:"pAdjusted"`
	Exact        bool `json:"exact,omitempty"`
	SlopePercent Num  `json:"slopePercentPerMeasurement"`
}

func trendSide(values []float64) TrendSide {
	tr := stats.MannKendall(values)
	return TrendSide{N: tr.N, Tau: Num(tr.Tau), P: Num(tr.P), PAdjusted: Num(tr.P), Exact: tr.Exact, SlopePercent: Num(tr.SlopePercent)}
}

// orderTrends tests every headline row's sides for a trend in the order
// they ran, adjusts the p-values (Holm) over all of them, and flags the
// sides below alpha.
func orderTrends(rep *Report, alpha float64) {
	var sides []*TrendSide
	for i := range rep.Rows {
		row := &rep.Rows[i]
		if !rep.IsPrimary(*row) {
			continue
		}
		row.Order = &OrderRow{Baseline: trendSide(row.BaselineVals), Candidate: trendSide(row.CandidateVals)}
		sides = append(sides, &row.Order.Baseline, &row.Order.Candidate)
	}
	ps := make([]float64, len(sides))
	for i, s := range sides {
		ps[i] = float64(s.P)
	}
	for i, p := range stats.Adjust(ps, stats.Holm) {
		sides[i].PAdjusted = Num(p)
	}
	for i := range rep.Rows {
		row := &rep.Rows[i]
		if row.Order == nil {
			continue
		}
		var flags []string
		for _, side := range []struct {
			name string
			t    TrendSide
		}{{rep.Baseline, row.Order.Baseline}, {rep.Candidate, row.Order.Candidate}} {
			if float64(side.t.PAdjusted) < alpha {
				way := "rises"
				if side.t.Tau < 0 {
					way = "falls"
				}
				flags = append(flags, fmt.Sprintf("%s %s %.2g %% per measurement over %d in the order they ran (Kendall τ %+.2f, p %.2g adjusted)",
					side.name, way, math.Abs(float64(side.t.SlopePercent)), side.t.N, float64(side.t.Tau), float64(side.t.PAdjusted)))
			}
		}
		row.Order.Flag = strings.Join(flags, "; ")
	}
}

// orderLine is the summary's line of the order effects found: the rows
// whose sides trend (at most three).
func orderLine(rep *Report) string {
	var parts []string
	n := 0
	for _, row := range rep.Rows {
		if row.Order == nil || row.Order.Flag == "" {
			continue
		}
		n++
		if len(parts) < 3 {
			parts = append(parts, shorten(metricName(row), tableNameWidth)+": "+row.Order.Flag)
		}
	}
	if n == 0 {
		return ""
	}
	if n > len(parts) {
		parts = append(parts, fmt.Sprintf("… %d more", n-len(parts)))
	}
	return fmt.Sprintf("Order effect (%d): %s — the measurements are not exchangeable (the data grows or ages between them): reset the data between repetitions, or read the paired analysis by round",
		n, strings.Join(parts, "; "))
}
