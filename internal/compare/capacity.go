package compare

import (
	"fmt"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// A capacity run (spec.capacity) is compared on what it found, not on its
// levels, which differ from search to search: each run is one
// measurement of step CapacityStep, whose metrics are the maximum level
// (the primary) and the throughput there. Several runs a variant
// (spec.runsPerVariant: repeated searches) give each side a sample, and
// the Δ of the maximum its interval like any metric's.
const (
	CapacityStep       = "capacity"
	MetricCapacity     = "capacityMaximum"
	MetricAtCapacity   = "throughputAtMaximum"
	capacityRepetition = 1
)

// asCapacity makes r, a capacity run, the one measurement it is compared
// on: Invalid, with the search's message, when it found no maximum or its
// levels could not be judged, or while it has not ended.
func asCapacity(r *Run, cs *benchv1.CapacityStatus) {
	rep := benchv1.RepetitionStatus{Index: capacityRepetition, Verdict: benchv1.VerdictSucceeded}
	unit := "level"
	if cs != nil {
		unit = CapacityUnit(cs.Parameter)
	}
	var metrics []benchv1.MetricValue
	switch {
	case cs == nil || cs.StopReason == "":
		rep.Verdict, rep.Reasons = benchv1.VerdictFailed, []string{"the capacity search has not ended"}
	case cs.StopReason == benchv1.CapacityMeasurementFailed:
		rep.Verdict, rep.Reasons = benchv1.VerdictInvalid, []string{fmt.Sprintf("the search ended %s: %s", cs.StopReason, cs.Message)}
	case cs.Maximum == nil:
		rep.Verdict, rep.Reasons = benchv1.VerdictInvalid, []string{fmt.Sprintf("no level passed (%s): %s", cs.StopReason, cs.Message)}
	default:
		metrics = append(metrics, benchv1.MetricValue{Name: MetricCapacity, Operation: cs.Parameter, Value: float64(*cs.Maximum), Unit: unit, Direction: benchv1.HigherIsBetter})
		if t := cs.Throughput; t != nil {
			metrics = append(metrics, benchv1.MetricValue{Name: MetricAtCapacity, Operation: t.Name, Value: t.Value, Unit: t.Unit, Direction: t.Direction})
		}
	}
	rep.Metrics = metrics
	step := benchv1.StepStatus{Name: CapacityStep, Repetitions: []benchv1.RepetitionStatus{rep}}
	param := ""
	if cs != nil {
		param = cs.Parameter
		step.Parameters = map[string]string{"parameter": cs.Parameter}
	}
	step.Summary = []benchv1.MetricSummary{{Name: MetricCapacity, Operation: param, Unit: unit, Direction: benchv1.HigherIsBetter}}
	if len(metrics) > 0 {
		one := stats.Summarize([]float64{metrics[0].Value})
		step.Summary[0].N, step.Summary[0].Median, step.Summary[0].Mean, step.Summary[0].Min, step.Summary[0].Max = int32(one.N), one.Median, one.Mean, one.Min, one.Max
		res := results.New("capacity")
		for _, x := range metrics {
			res.Add(results.Metric{Name: x.Name, Operation: x.Operation, Value: x.Value, Unit: x.Unit, Direction: x.Direction})
		}
		r.Measurements = []Measurement{{Step: CapacityStep, Repetition: capacityRepetition, Result: res}}
	}
	r.Steps = []benchv1.StepStatus{step}
}

// CapacityUnit is the unit of a capacity maximum: "/s" for an offered
// rate, else the parameter's name (clients, threads, vus).
func CapacityUnit(parameter string) string {
	if parameter == "rate" {
		return "/s"
	}
	return parameter
}
