package stats

import (
	"fmt"
	"slices"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// Correction for testing many metrics at once: the API's.
type Correction = benchv1.Correction

const (
	Holm              = benchv1.CorrectionHolm
	BenjaminiHochberg = benchv1.CorrectionBenjaminiHochberg
	NoCorrection      = benchv1.CorrectionNone
)

// Corrections are the corrections criteria can name.
var Corrections = []Correction{Holm, BenjaminiHochberg, NoCorrection}

// The criteria's defaults and bounds, the one place they are spelled: a
// BenchmarkComparison's schema repeats them in its markers (a test of
// internal/compare holds the CRD to these), the controller fills what a spec
// lacks with them, and the plugin's flags start from them.
const (
	DefaultAlpha            = 0.05
	DefaultMinEffectPercent = 1.0
	DefaultCorrection       = Holm
	// DefaultOperationCorrection is the correction over every metric but
	// the headline (compare.Options): the false discovery rate keeps a
	// table of tens to hundreds of operations useful at 5 vs 5.
	DefaultOperationCorrection = BenjaminiHochberg
	DefaultTest                = RankTest
	// MaxAlpha bounds alpha from above, as 0 does from below (neither
	// included): a level of 0.5 or more calls a coin toss significant.
	MaxAlpha = 0.5
)

// Criteria decide verdicts.
type Criteria struct {
	// Alpha is the significance level of the (adjusted) p-value and 1 minus
	// the confidence level of the interval. Unset: DefaultAlpha.
	Alpha float64
	// MinEffectPercent is the smallest change worth a verdict other than
	// NoChange; also the equivalence margin for NoChange. Zero is none:
	// any significant change is Better or Worse (a spec that says nothing
	// gets DefaultMinEffectPercent from the API server or DefaultCriteria).
	MinEffectPercent float64
	// MaxCVPercent marks a sample unstable above it; 0 disables.
	MaxCVPercent float64
	// Correction across the metrics compared together. Unset:
	// DefaultCorrection.
	Correction Correction
	// Test is the significance test and interval. Unset: DefaultTest.
	Test Test
}

// DefaultCriteria are the criteria of a comparison that sets none.
func DefaultCriteria() Criteria {
	return Criteria{MinEffectPercent: DefaultMinEffectPercent}.WithDefaults()
}

// WithDefaults fills in what the criteria leave unset and cannot mean: a
// zero alpha, no correction, no test. A zero minimum effect means none and
// is kept.
func (c Criteria) WithDefaults() Criteria {
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	if c.Correction == "" {
		c.Correction = DefaultCorrection
	}
	if c.Test == "" {
		c.Test = DefaultTest
	}
	return c
}

// InvalidCriterion is a criterion out of its bounds.
type InvalidCriterion struct {
	// Criterion is named as Criteria (or compare.Options) names it.
	Criterion string
	// Value as given, printed.
	Value string
	// Bounds say what it may be.
	Bounds string
}

func (e InvalidCriterion) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Criterion, e.Value, e.Bounds)
}

// Validate returns the first criterion out of the bounds a
// BenchmarkComparison's schema sets, each as given: a zero alpha or no
// correction, which WithDefaults would fill, is refused (validate the
// defaulted criteria to allow them). Test, not part of the schema, may be
// unset.
func (c Criteria) Validate() error {
	if !(c.Alpha > 0 && c.Alpha < MaxAlpha) {
		return InvalidCriterion{"Alpha", fmt.Sprint(c.Alpha), fmt.Sprintf("above 0 and below %g, such as %g", MaxAlpha, DefaultAlpha)}
	}
	if !isPercent(c.MinEffectPercent) {
		return InvalidCriterion{"MinEffectPercent", fmt.Sprint(c.MinEffectPercent), "a percent from 0 to 100"}
	}
	if !isPercent(c.MaxCVPercent) {
		return InvalidCriterion{"MaxCVPercent", fmt.Sprint(c.MaxCVPercent), "a percent from 0 to 100"}
	}
	if err := ValidateCorrection("Correction", c.Correction); err != nil {
		return err
	}
	if c.Test != "" && c.Test != RankTest && c.Test != WelchLogTest {
		return InvalidCriterion{"Test", fmt.Sprintf("%q", c.Test), fmt.Sprintf("%s or %s", RankTest, WelchLogTest)}
	}
	return nil
}

func isPercent(p float64) bool { return p >= 0 && p <= 100 }

// ValidateCorrection refuses a correction that is none of Corrections:
// unchecked, an unknown one would mean no correction at all (Adjust).
func ValidateCorrection(criterion string, c Correction) error {
	if slices.Contains(Corrections, c) {
		return nil
	}
	return InvalidCriterion{criterion, fmt.Sprintf("%q", c), "Holm, BenjaminiHochberg or None"}
}
