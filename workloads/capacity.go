package workloads

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// What a tool offers a capacity run (spec.capacity): its load knobs beyond
// the swept parameters, and its own checks of the capacity rules.

// RateParameter is the step parameter of an offered rate per second: a
// capacity run's level when spec.capacity.parameter is "rate".
const RateParameter = "rate"

// RateKnob is implemented by tools that can offer a fixed rate (open loop)
// when a step's parameters carry RateParameter.
type RateKnob interface {
	// RateCorrected says whether the tool's latency at a fixed rate is
	// measured from each request's intended start (corrected for
	// coordinated omission) rather than from when it was sent, for the
	// workload spec (a custom tool says so of itself in its settings).
	RateCorrected(spec *benchv1.WorkloadSpec) bool
}

// DurationParameter is the step parameter of a measurement's duration in
// seconds, for a level held longer than the workload's own duration (a
// capacity confirmation).
const DurationParameter = "durationSeconds"

// DurationKnob is implemented by tools that measure a step for the
// duration its parameters carry in DurationParameter.
type DurationKnob interface {
	StepDuration()
}

// CapacityChecker is implemented by tools that judge a capacity rule their
// own way and must check it against their settings: it returns what is
// wrong, naming the field under path (spec.capacity).
type CapacityChecker interface {
	CheckCapacity(spec *benchv1.WorkloadSpec, c *benchv1.CapacitySpec, path *field.Path) field.ErrorList
}
