package compare

import (
	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// OptionsFor are the options a BenchmarkComparison's criteria ask for: what
// the API server stored, defaulted from internal/stats where a spec that
// did not pass through it lacks a value. An explicit zero minimum effect is
// zero.
func OptionsFor(c benchv1.ComparisonCriteria) Options {
	crit := stats.Criteria{Alpha: c.Alpha, MinEffectPercent: stats.DefaultMinEffectPercent,
		MaxCVPercent: float64(c.MaxCoefficientOfVariationPercent), Correction: correctionOf(c.Correction)}
	if c.MinEffectPercent != nil {
		crit.MinEffectPercent = float64(*c.MinEffectPercent)
	}
	return Options{Criteria: crit, OperationCorrection: correctionOf(c.OperationCorrection), Metrics: c.Metrics, Operations: c.Operations}
}

// correctionOf is the statistics' name of the API's correction; "" (the
// family's default) for none.
func correctionOf(c benchv1.Correction) stats.Correction {
	switch c {
	case benchv1.CorrectionHolm:
		return stats.Holm
	case benchv1.CorrectionBenjaminiHochberg:
		return stats.BenjaminiHochberg
	case benchv1.CorrectionNone:
		return stats.NoCorrection
	}
	return ""
}

// Validate returns the first criterion out of its bounds, which are a
// BenchmarkComparison's (stats.InvalidCriterion), each as given.
func (o Options) Validate() error {
	if err := o.Criteria.Validate(); err != nil {
		return err
	}
	return stats.ValidateCorrection("OperationCorrection", o.OperationCorrection)
}

// familyCriteria are the criteria of a family: the operations' test is
// Welch's on logarithms, corrected by OperationCorrection.
func (o Options) familyCriteria(f int) stats.Criteria {
	c := o.Criteria.WithDefaults()
	if f == familyOperations {
		c.Test = stats.WelchLogTest
		c.Correction = o.OperationCorrection
		if c.Correction == "" {
			c.Correction = stats.DefaultOperationCorrection
		}
	}
	return c
}
