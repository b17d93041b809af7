package disturb

import (
	"math"
	"sort"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// The card's figures as metric names (units in the names).
const (
	FigureSteadyThroughput      = "steadyThroughput"
	FigureTookEffectSeconds     = "tookEffectSeconds"
	FigureDetectSeconds         = "detectSeconds"
	FigureUnavailableSeconds    = "unavailableSeconds"
	FigureWorstLatencyMillis    = "worstLatencyMillis"
	FigureDipLowestPercent      = "dipLowestPercent"
	FigureRecoverySeconds       = "recoverySeconds"
	FigureOperationsLost        = "operationsLost"
	FigureErrorsDuring          = "errorsDuring"
	FigureNewPrimarySeconds     = "newPrimarySeconds"
	FigureFullRedundancySeconds = "fullRedundancySeconds"
	FigureLedgerAcknowledged    = "ledgerAcknowledgedWrites"
	FigureLedgerLost            = "ledgerLostWrites"
	FigureToolGaveUp            = "toolGaveUp"
	FigureGaveUpAfterSeconds    = "toolGaveUpAfterSeconds"
	FigureToolRestarts          = "toolRestarts"
	FigureResumedAfterSeconds   = "toolResumedAfterSeconds"
)

// Metrics are the card's figures as metrics of the measurement (operation
// the disturbance's name, source Source); those it could not compute are
// left out.
func (c Card) Metrics() []results.Metric {
	var out []results.Metric
	add := func(name string, v float64, unit string, dir results.Direction) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, results.Metric{Name: name, Operation: c.Name, Value: v, Unit: unit, Direction: dir, Source: Source})
		}
	}
	add(FigureSteadyThroughput, c.SteadyThroughput, c.Unit, results.Neutral)
	add(FigureTookEffectSeconds, c.TookEffectSeconds, "s", results.Neutral)
	add(FigureDetectSeconds, c.DetectSeconds, "s", results.Neutral)
	add(FigureUnavailableSeconds, c.UnavailableSeconds, "s", results.LowerIsBetter)
	add(FigureWorstLatencyMillis, c.WorstLatencyMillis, "ms", results.LowerIsBetter)
	add(FigureDipLowestPercent, c.DipLowestPercent, "%", results.HigherIsBetter)
	add(FigureRecoverySeconds, c.RecoverySeconds, "s", results.LowerIsBetter)
	add(FigureOperationsLost, c.OperationsLost, "operations", results.LowerIsBetter)
	add(FigureErrorsDuring, c.ErrorsDuring, "errors", results.LowerIsBetter)
	add(FigureNewPrimarySeconds, c.NewPrimarySeconds, "s", results.LowerIsBetter)
	add(FigureFullRedundancySeconds, c.FullRedundancySeconds, "s", results.LowerIsBetter)
	add(FigureLedgerAcknowledged, c.LedgerAcknowledged, "writes", results.Neutral)
	add(FigureLedgerLost, c.LedgerLost, "writes", results.LowerIsBetter)
	gaveUp := 0.0
	if c.ToolGaveUp {
		gaveUp = 1
	}
	add(FigureToolGaveUp, gaveUp, "", results.LowerIsBetter)
	add(FigureGaveUpAfterSeconds, c.GaveUpAfterSeconds, "s", results.Neutral)
	add(FigureToolRestarts, c.ToolRestarts, "restarts", results.Neutral)
	add(FigureResumedAfterSeconds, c.ResumedAfterSeconds, "s", results.LowerIsBetter)
	return out
}

// statusFigures are the card's figures a run's status keeps (the results
// ConfigMap has them all).
var statusFigures = []string{FigureRecoverySeconds, FigureUnavailableSeconds, FigureDipLowestPercent, FigureOperationsLost,
	FigureNewPrimarySeconds, FigureLedgerLost, FigureToolGaveUp}

// StatusFigures returns a result's card figures a status keeps.
func StatusFigures(r *results.Result) []results.Metric {
	var out []results.Metric
	for _, name := range statusFigures {
		for _, m := range r.Metrics {
			if m.Source == Source && m.Name == name {
				out = append(out, m)
			}
		}
	}
	return out
}

// neighbourUnits are the units of a stress pod's report (internal/runner/
// stress), by its keys; a key not listed is a count.
var neighbourUnits = map[string]string{"cpuSeconds": "s", "wallSeconds": "s", "memoryBytes": "bytes",
	"diskBytesWritten": "bytes", "diskSyncsPerSecond": "per second"}

// NeighbourMetrics are a noisy neighbour's own figures (its stress pod's
// report: CPU seconds it used, bytes it wrote, syncs per second) as
// detail metrics of the measurement, operation the disturbance's name,
// named "neighbour" + the report's key: what the neighbour did is part of
// what is compared.
func NeighbourMetrics(name string, report map[string]float64) []results.Metric {
	keys := make([]string, 0, len(report))
	for k := range report {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []results.Metric
	for _, k := range keys {
		v := report[k]
		if math.IsNaN(v) || math.IsInf(v, 0) || k == "" {
			continue
		}
		unit, ok := neighbourUnits[k]
		if !ok {
			unit = "count"
		}
		out = append(out, results.Metric{Name: "neighbour" + strings.ToUpper(k[:1]) + k[1:], Operation: name, Value: v, Unit: unit,
			Direction: results.Neutral, Source: Source, Detail: true})
	}
	return out
}
