package v1alpha1

// Labels users set or read on runs, comparisons and schedules (the labels
// of a run's own children are declared with the run).
const (
	// LabelRelease names the release a run measured (set on a run, or on a
	// schedule's template): it becomes the release label of the run's
	// metrics and of its schedule history entry, and a schedule's
	// baselineSelector matches it.
	LabelRelease = "bench.dbperf.io/release"
	// LabelComparison is on the runs (and the report ConfigMap) a
	// BenchmarkComparison owns: the comparison's UID.
	LabelComparison = "bench.dbperf.io/comparison"
	// LabelVariant is on a comparison's runs: the variant they measure.
	LabelVariant = "bench.dbperf.io/variant"
	// LabelSchedule is on the runs and comparisons a BenchmarkSchedule
	// owns: the schedule's UID.
	LabelSchedule = "bench.dbperf.io/schedule"
)
