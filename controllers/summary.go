package controllers

import (
	"fmt"
	"math"
	"strconv"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/status"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// summarizeStep recomputes a step's summary over its valid repetitions:
// failed and invalid ones are excluded, never averaged in.
func summarizeStep(run *benchv1.BenchmarkRun, step *benchv1.StepStatus, primary results.Key) {
	type series struct {
		m      benchv1.MetricValue
		values []float64
	}
	var order []results.Key
	byKey := map[results.Key]*series{}
	for _, rep := range step.Repetitions {
		if rep.Verdict != benchv1.VerdictSucceeded {
			continue
		}
		for _, m := range rep.Metrics {
			k := results.Key{Name: m.Name, Operation: m.Operation}
			s, ok := byKey[k]
			if !ok {
				s = &series{m: m}
				byKey[k] = s
				order = append(order, k)
			}
			s.values = append(s.values, m.Value)
		}
	}
	step.Summary = nil
	step.Unstable = false
	for _, k := range order {
		s := byKey[k]
		st := stats.Summarize(s.values)
		ms := benchv1.MetricSummary{
			Name: s.m.Name, Operation: s.m.Operation, Unit: s.m.Unit, Direction: s.m.Direction, Source: s.m.Source,
			N: int32(st.N), Median: bounded(st.Median), Mean: bounded(status.Round(st.Mean, 6)), Min: st.Min, Max: st.Max,
		}
		if st.HasCI && finiteAll(st.CILow, st.CIHigh, st.CVPercent) {
			lo, hi, cv := status.Round(st.CILow, 6), status.Round(st.CIHigh, 6), status.Round(st.CVPercent, 3)
			ms.CILow, ms.CIHigh, ms.CoefficientOfVariationPercent = &lo, &hi, &cv
			limit := run.Spec.Validity.MaxCoefficientOfVariationPercent
			if k == primary && limit > 0 && st.CVPercent > float64(limit) {
				step.Unstable = true
			}
		}
		step.Summary = append(step.Summary, ms)
	}
}

func finiteAll(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// updatePrimary sets the headline number: the median of the primary metric
// at the step where it is best.
func updatePrimary(run *benchv1.BenchmarkRun, primary results.Key) {
	var best *benchv1.PrimaryMetric
	for _, step := range run.Status.Steps {
		for _, s := range step.Summary {
			if s.Name != primary.Name || s.Operation != primary.Operation {
				continue
			}
			better := best == nil || (s.Direction == benchv1.LowerIsBetter && s.Median < best.Value) ||
				(s.Direction != benchv1.LowerIsBetter && s.Median > best.Value)
			if better {
				best = &benchv1.PrimaryMetric{Name: s.Name, Operation: s.Operation, Step: step.Name, Value: s.Median, Unit: s.Unit}
			}
		}
	}
	if best == nil {
		return
	}
	for _, step := range run.Status.Steps {
		if step.Name == best.Step {
			best.TargetCPUCores, best.EfficiencyPerTargetCore = targetFigures(step.Summary)
		}
	}
	best.Display = formatValue(best.Value) + " " + best.Unit
	if best.Operation != "" && best.Operation != "Totals" {
		best.Display += " " + best.Operation
	}
	if len(run.Status.Steps) > 1 {
		best.Display += " @" + best.Step
	}
	run.Status.Primary = best
}

// formatValue prints a number with as many decimals as its size deserves.
func formatValue(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return fmt.Sprint(status.Round(v, 3))
	}
}

// bounded is v, with the infinities that sums of values near the largest
// float64 overflow to brought back to it: JSON, and so a status, has no
// infinity (nor NaN, which becomes 0).
func bounded(v float64) float64 {
	switch {
	case math.IsNaN(v):
		return 0
	case math.IsInf(v, 0):
		return math.Copysign(math.MaxFloat64, v)
	}
	return v
}

// targetFigures are a step's target CPU (the pods' sum, else the server's
// own count) and efficiency, when telemetry measured them.
func targetFigures(summary []benchv1.MetricSummary) (cpu, efficiency *float64) {
	find := func(k results.Key) *float64 {
		for _, s := range summary {
			if s.Source != "" && s.Name == k.Name && s.Operation == k.Operation {
				v := status.Round(s.Median, 3)
				return &v
			}
		}
		return nil
	}
	for _, k := range telemetry.TargetCPUKeys {
		if cpu = find(k); cpu != nil {
			break
		}
	}
	return cpu, find(results.Key{Name: telemetry.FigureEfficiency, Operation: string(telemetry.RoleTarget)})
}
