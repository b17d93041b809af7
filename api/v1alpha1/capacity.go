package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// CapacitySpec makes a run answer "how much load can it take": instead of
// measuring the workload's sweep, the run measures load levels one after
// another, judges each against the rules, and reports the largest level
// that passes (status.capacity). Each level is a step of status.steps,
// named after it ("rate=1600"), measured spec.repetitions times and judged
// on all of them.
//
// The levels are either an explicit ladder (stepped users: 5000, 10000,
// 20000, stopped at the first level that fails) or a search: a geometric
// step-up from a start level until a level fails, then bisection between
// the last passing and the first failing level until they are within
// widthPercent of each other. The reported maximum is the largest passing
// level below the smallest failing one (MLRsearch's rule, RFC 9971): a
// level that passes above one that failed does not raise it, and the
// result is flagged non-monotonic.
// +kubebuilder:validation:XValidation:rule="has(self.levels) != has(self.search)",message="give either levels (an explicit ladder) or search, not both"
type CapacitySpec struct {
	// Parameter is the load knob each level sets: "rate", an offered rate
	// per second, open loop (pgbench --rate, ycsb -target, a k6
	// constant-arrival-rate scenario, memtier --rate-limiting, a custom
	// tool's parameter named rate; docs/capacity.md says per tool whether
	// its latency is measured from each request's intended start), or the name of a parameter the
	// workload sweeps (pgbench's clients, memtier's threads, k6's vus,
	// ycsb's threads, hammerdb's vu (its virtual users), redisBenchmark's clients),
	// whose list must then hold one value, which the levels replace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Parameter string `json:"parameter"`

	// Levels is an explicit ladder, measured in order; the first level that
	// fails ends it (the stop rule), and no higher level is measured.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=1000000000
	// +optional
	Levels []int32 `json:"levels,omitempty"`

	// Search finds the level by step-up and bisection.
	// +optional
	Search *CapacitySearch `json:"search,omitempty"`

	// Rules decide whether a level passed; every rule that fails is named
	// with its figure. At least one rule is required.
	Rules CapacityRules `json:"rules"`

	// Confirm holds the maximum found (or a fraction of it) once more
	// after the search, for as long as it says, and checks that the rules
	// still hold. A failed confirmation counts as a failing level: the
	// search reopens below it once, and a second failed confirmation ends
	// it with stop reason ConfirmationFailed.
	// +optional
	Confirm *CapacityConfirm `json:"confirm,omitempty"`

	// Soak holds a share of the maximum for a long time once the search
	// (and its confirmation, when confirm is set) has ended, and judges
	// the time series of that one long measurement: the throughput's
	// trend, the latency's, the errors' and the target's memory (a leak).
	// It follows only a maximum found, and a confirmed one when confirm
	// is set; status.capacity.soak holds its verdict.
	// +optional
	Soak *CapacitySoak `json:"soak,omitempty"`

	// ExceedRatioPercent judges each repetition of a level on its own, as
	// a trial (RFC 9971 MLRsearch: many short trials rather than one long
	// one), and passes the level when at most this percent of its trials
	// fail: with repetitions 3 and 34, one trial in three may fail (a
	// hiccup of the platform) without failing the level. Unset, a level
	// is judged on its repetitions together (merged histograms, summed
	// counts).
	// +kubebuilder:validation:XValidation:rule="self < 100.0",message="must be below 100"
	// +optional
	ExceedRatioPercent *Percent `json:"exceedRatioPercent,omitempty"`

	// MaxLevels bounds the levels measured: a search that has not converged
	// by then reports what it found, with stop reason LevelBudget.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=20
	// +optional
	MaxLevels int32 `json:"maxLevels,omitempty"`

	// TimeBudget bounds the search: no level starts later than this after
	// the first level started (stop reason TimeBudget). Unset: only
	// spec.timeout bounds it.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m') && duration(self) <= duration('168h')",message="must be a duration between 1m and 168h"
	// +optional
	TimeBudget *metav1.Duration `json:"timeBudget,omitempty"`
}

// CapacitySearch is a geometric step-up, then a bisection.
// +kubebuilder:validation:XValidation:rule="!has(self.max) || self.max > self.start",message="max must be above start"
type CapacitySearch struct {
	// Start is the first level measured.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	Start int32 `json:"start"`

	// FactorPercent is each next level while every level passed, in percent
	// of the previous one: 200 doubles it.
	// +kubebuilder:validation:Minimum=110
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=200
	// +optional
	FactorPercent int32 `json:"factorPercent,omitempty"`

	// WidthPercent ends the bisection: the search stops when the smallest
	// failing level is within this percent above the largest passing one
	// ((failing − passing) / failing), or when they are adjacent integers.
	// +kubebuilder:validation:XValidation:rule="self >= 0.1 && self <= 50.0",message="must be between 0.1 and 50"
	// +kubebuilder:default=5
	// +optional
	WidthPercent Percent `json:"widthPercent,omitempty"`

	// Max is the highest level the search measures: a search that passes it
	// reports it, with stop reason UpperBound. Unset: no bound.
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=1000000000
	// +optional
	Max *int32 `json:"max,omitempty"`
}

// CapacityConfirm is the hold that confirms a maximum.
type CapacityConfirm struct {
	// FractionPercent of the maximum that is held: 95 holds 0.95 × it
	// (rounded down), a margin below the knee.
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=100
	// +optional
	FractionPercent int32 `json:"fractionPercent,omitempty"`

	// Duration of each of the confirmation's measurements, for tools that
	// take a duration per level (pgbench); unset, the workload's own. The
	// measure deadline of the confirmation follows it.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('72h')",message="must be a duration between 1s and 72h"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// CapacitySoak is the long hold below the maximum. Each trend is the
// least-squares line of its series over the soak (after the workload's
// warm-up), as the change it makes from the soak's start to its end in
// percent of its mean, with its 95 % interval; a check fails when the
// whole interval lies beyond its limit in the bad direction, so a flat
// but noisy series never fails one. A change whose estimate is beyond the
// limit but whose interval reaches inside it passes and is named
// inconclusive in the soak's reasons: a longer soak would tell.
type CapacitySoak struct {
	// Percent of the maximum held (rounded down, at least 1): 75 holds
	// 0.75 × the confirmed maximum, the margin users run production at.
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=75
	// +optional
	Percent int32 `json:"percent,omitempty"`

	// Duration of the soak: one measurement of that length, for tools
	// that take a duration per level (pgbench). Its measure deadline and
	// the run's timeout must leave room for it (twice, for a retry).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('30s') && duration(self) <= duration('72h')",message="must be a duration between 30s and 72h"
	Duration metav1.Duration `json:"duration"`

	// MaxThroughputDropPercent is the largest fall of the throughput over
	// the soak, in percent of its mean.
	// +kubebuilder:default=5
	// +optional
	MaxThroughputDropPercent Percent `json:"maxThroughputDropPercent,omitempty"`

	// MaxLatencyGrowthPercent is the largest rise of the latency series
	// over the soak (pgbench's mean latency per progress interval; a
	// histogram tool's interval percentile of the first latency rule), in
	// percent of its mean.
	// +kubebuilder:default=20
	// +optional
	MaxLatencyGrowthPercent Percent `json:"maxLatencyGrowthPercent,omitempty"`

	// MaxErrorGrowthPercent is the largest rise of the failed requests'
	// share over the soak, in percentage points of all requests.
	// +kubebuilder:default=1
	// +optional
	MaxErrorGrowthPercent Percent `json:"maxErrorGrowthPercent,omitempty"`

	// MaxMemoryGrowthPercent is the largest rise of the target's memory
	// working set over the soak (the telemetry's memoryWorkingSetBytes of
	// the target), in percent of its mean: a leak.
	// +kubebuilder:default=10
	// +optional
	MaxMemoryGrowthPercent Percent `json:"maxMemoryGrowthPercent,omitempty"`
}

// CapacityRules decide whether a level passed. A level passes when every
// rule set holds on its repetitions together.
// +kubebuilder:validation:XValidation:rule="has(self.latency) || has(self.maxErrorPercent) || has(self.minAchievedPercent) || has(self.minGainPercent) || has(self.metrics)",message="give at least one rule"
type CapacityRules struct {
	// Latency rules: a percentile of an operation at most a time. Judged
	// on the level's merged latency histograms (never averaged
	// percentiles); pgbench, which keeps no histogram, judges it exactly
	// from its count of transactions over --latency-limit, which must then
	// equal the rule's maximum (workload.pgbench.latencyLimit).
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Latency []LatencyRule `json:"latency,omitempty"`

	// MaxErrorPercent is the highest share of failed requests, over all the
	// level's repetitions.
	// +optional
	MaxErrorPercent *Percent `json:"maxErrorPercent,omitempty"`

	// MinAchievedPercent is the lowest achieved rate, in percent of the
	// offered one, of a rate level: below it the generators did not offer
	// the load the level names (too few clients or virtual users for the
	// target's latency, or a saturated generator), and the level fails
	// for that reason first. A tool that schedules its requests at random
	// (pgbench's Poisson --rate) and counts those it skipped is judged on
	// its own schedule (completed of completed + skipped), which a short
	// level's randomness does not blur. Only for parameter rate.
	// +optional
	MinAchievedPercent *Percent `json:"minAchievedPercent,omitempty"`

	// MinGainPercent is the lowest gain of throughput over the previous
	// (lower) passing level, in percent of the load added: a level that
	// adds load without adding throughput is past the knee. 50 means half
	// of the added load must come out as throughput.
	// +optional
	MinGainPercent *Percent `json:"minGainPercent,omitempty"`

	// Metrics are rules on any figure a measurement records, by name: the
	// tool's own, the server's statistics or the target's resources
	// (cpuLimitPercent of operation target, ...). A maximum is judged on
	// the largest value over the level's repetitions, a minimum on the
	// smallest.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Metrics []MetricRule `json:"metrics,omitempty"`
}

// LatencyRule is a percentile of an operation's latency at most a time.
type LatencyRule struct {
	// Operation names the operation (as the results name it); empty means
	// the tool's whole load (pgbench's transactions, or every operation's
	// histogram merged).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Operation string `json:"operation,omitempty"`

	// Percentile, such as 99 or 99.9.
	// +kubebuilder:validation:XValidation:rule="self > 0.0 && self < 100.0",message="must be above 0 and below 100"
	Percentile Percent `json:"percentile"`

	// Max is the highest latency at that percentile.
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('1h')",message="must be a duration between 1µs and 1h, such as 20ms"
	Max metav1.Duration `json:"max"`
}

// MetricRule bounds a recorded figure.
// +kubebuilder:validation:XValidation:rule="has(self.max) || has(self.min)",message="give max or min"
type MetricRule struct {
	// Name of the metric, such as cpuLimitPercent.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Operation of the metric, such as target; empty for none.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Operation string `json:"operation,omitempty"`
	// Max is the highest value that passes.
	// +optional
	Max *float64 `json:"max,omitempty"`
	// Min is the lowest value that passes.
	// +optional
	Min *float64 `json:"min,omitempty"`
}

// CapacityStopReason says why a capacity search ended.
// +kubebuilder:validation:Enum=Converged;FirstFailure;LadderDone;UpperBound;LowestFails;LevelBudget;TimeBudget;MeasurementFailed;ConfirmationFailed;GeneratorLimit
type CapacityStopReason string

const (
	// CapacityConverged: the bisection brought the largest passing and the
	// smallest failing level within widthPercent.
	CapacityConverged CapacityStopReason = "Converged"
	// CapacityFirstFailure: a level of the ladder failed (the stop rule).
	CapacityFirstFailure CapacityStopReason = "FirstFailure"
	// CapacityLadderDone: every level of the ladder passed.
	CapacityLadderDone CapacityStopReason = "LadderDone"
	// CapacityUpperBound: the search passed search.max.
	CapacityUpperBound CapacityStopReason = "UpperBound"
	// CapacityLowestFails: even level 1 (or the ladder's first) failed.
	CapacityLowestFails CapacityStopReason = "LowestFails"
	// CapacityLevelBudget: maxLevels were measured.
	CapacityLevelBudget CapacityStopReason = "LevelBudget"
	// CapacityTimeBudget: timeBudget passed.
	CapacityTimeBudget CapacityStopReason = "TimeBudget"
	// CapacityMeasurementFailed: a level's measurement failed or was
	// invalid for a reason no rule judges, twice (it is retried once).
	CapacityMeasurementFailed CapacityStopReason = "MeasurementFailed"
	// CapacityConfirmationFailed: the maximum failed its confirmation
	// twice (the search reopened below the first).
	CapacityConfirmationFailed CapacityStopReason = "ConfirmationFailed"
	// CapacityGeneratorLimit: the pre-flight check refused the next rate
	// level: at the load generators' CPU per operation measured at the
	// levels so far, the CPU they declare (spec.workload.resources) cannot
	// offer it; the message says how many generators it needs. What was
	// found below it stands (a lower bound).
	CapacityGeneratorLimit CapacityStopReason = "GeneratorLimit"
)

// CapacityStatus is what a capacity search found.
type CapacityStatus struct {
	// Parameter is spec.capacity.parameter.
	Parameter string `json:"parameter"`

	// Maximum is the largest passing level below the smallest failing one;
	// absent when no level passed.
	// +optional
	Maximum *int32 `json:"maximum,omitempty"`

	// Throughput is the primary metric's median at the maximum.
	// +optional
	Throughput *MetricValue `json:"throughput,omitempty"`

	// SmallestFailing is the smallest level that failed, the bound the
	// maximum is below.
	// +optional
	SmallestFailing *int32 `json:"smallestFailing,omitempty"`

	// StopReason says why the search ended; empty while it runs.
	// +optional
	StopReason CapacityStopReason `json:"stopReason,omitempty"`

	// Message says it in words, with the figures of the failing rules.
	// +optional
	Message string `json:"message,omitempty"`

	// Confirmed is whether the confirmation held (spec.capacity.confirm);
	// absent without one, or before it ended.
	// +optional
	Confirmed *bool `json:"confirmed,omitempty"`

	// NonMonotonic is set when a level passed above one that failed: the
	// maximum stays below the failing one, and the curve deserves a look.
	// +optional
	NonMonotonic bool `json:"nonMonotonic,omitempty"`

	// CoordinatedOmission says how the tool's latency at a fixed rate is
	// measured: Corrected (from each request's intended start), or
	// Uncorrected (from when it was sent: near the limit it flatters),
	// which a latency rule warns about.
	// +optional
	CoordinatedOmission string `json:"coordinatedOmission,omitempty"`

	// Levels are the levels in the order measured, confirmations
	// included: the knee curve.
	// +kubebuilder:validation:MaxItems=102
	// +optional
	Levels []CapacityLevel `json:"levels,omitempty"`

	// Soak is the soak's verdict (spec.capacity.soak): absent until the
	// soak starts, and when none was asked for or there was no maximum to
	// hold.
	// +optional
	Soak *CapacitySoakStatus `json:"soak,omitempty"`
}

// SoakCheckName names a trend a soak judges.
// +kubebuilder:validation:Enum=ThroughputDrop;LatencyGrowth;ErrorGrowth;MemoryGrowth
type SoakCheckName string

const (
	SoakThroughputDrop SoakCheckName = "ThroughputDrop"
	SoakLatencyGrowth  SoakCheckName = "LatencyGrowth"
	SoakErrorGrowth    SoakCheckName = "ErrorGrowth"
	SoakMemoryGrowth   SoakCheckName = "MemoryGrowth"
)

// CapacitySoakStatus is what the soak found.
type CapacitySoakStatus struct {
	// Value is the level held: spec.capacity.soak.percent of the maximum.
	Value int32 `json:"value"`
	// Step is the name of its status.steps entry.
	Step string `json:"step"`
	// Passed is whether every check held; absent while it runs and when
	// it could not be judged (Reasons says why).
	// +optional
	Passed *bool `json:"passed,omitempty"`
	// Reasons name each check that failed, with its figure, each that
	// was inconclusive, each that could not be judged (no such series),
	// or why the soak could not be judged at all.
	// +optional
	Reasons []string `json:"reasons,omitempty"`
	// Checks are the trends judged, one per series found.
	// +kubebuilder:validation:MaxItems=4
	// +optional
	Checks []SoakCheck `json:"checks,omitempty"`
	// Attempts is how many times the soak was started: 2 when its first
	// measurement failed (a lost load-generator pod, a node gone) and it
	// was measured again from its start, which Restarts says. A manager
	// restart does not restart it: the soak's Job runs on.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// Restarts says why the soak was measured again, and when its first
	// attempt ended.
	// +optional
	Restarts string `json:"restarts,omitempty"`
}

// SoakCheck is one trend over the soak.
type SoakCheck struct {
	Name SoakCheckName `json:"name"`
	// Series is the series judged (its key in the results).
	Series string `json:"series"`
	// ChangePercent is the change the series' least-squares line makes
	// from the soak's start to its end, in percent of its mean
	// (ErrorGrowth: in percentage points of the requests).
	ChangePercent float64 `json:"changePercent"`
	// CILowPercent and CIHighPercent bound it at 95 %.
	CILowPercent  float64 `json:"ciLowPercent"`
	CIHighPercent float64 `json:"ciHighPercent"`
	// LimitPercent is the check's limit (spec.capacity.soak).
	LimitPercent float64 `json:"limitPercent"`
	// Significant is whether the slope differs from zero (p < 0.05).
	Significant bool `json:"significant"`
	// Passed is false when the whole interval lies beyond the limit.
	Passed bool `json:"passed"`
	// Points is how many intervals the line was fitted to.
	Points int32 `json:"points"`
}

// CapacityLevel is one judged level.
type CapacityLevel struct {
	// Value of the parameter.
	Value int32 `json:"value"`
	// Step is the name of its status.steps entry.
	Step string `json:"step"`
	// Passed is whether every rule held; absent while it is measured.
	// +optional
	Passed *bool `json:"passed,omitempty"`
	// Reasons name each rule that failed, with its figure, or why the
	// level could not be judged.
	// +optional
	Reasons []string `json:"reasons,omitempty"`
	// Throughput is the primary metric's median over the level's valid
	// repetitions.
	// +optional
	Throughput *float64 `json:"throughput,omitempty"`
	// AchievedPercent is the achieved rate in percent of the offered one
	// (rate levels).
	// +optional
	AchievedPercent *float64 `json:"achievedPercent,omitempty"`
	// LatencyMillis is the first latency rule's percentile at this level,
	// from the merged histograms (absent for pgbench, which gives
	// LatencyOverLimitPercent instead).
	// +optional
	LatencyMillis *float64 `json:"latencyMillis,omitempty"`
	// LatencyOverLimitPercent is pgbench's share of transactions over
	// --latency-limit, skipped ones included.
	// +optional
	LatencyOverLimitPercent *float64 `json:"latencyOverLimitPercent,omitempty"`
	// LoadGeneratorCPUMicrosPerOperation is the load generators' CPU time
	// per operation of the throughput at this level, in microseconds (the
	// mean over its repetitions; absent where the runner could not read
	// the generators' CPU). The pre-flight check of a rate level reads it
	// (stop reason GeneratorLimit).
	// +optional
	LoadGeneratorCPUMicrosPerOperation *float64 `json:"loadGeneratorCPUMicrosPerOperation,omitempty"`
	// Confirm marks the confirmation of a maximum (spec.capacity.confirm),
	// held at Value.
	// +optional
	Confirm bool `json:"confirm,omitempty"`
	// Retried is set when a failed or invalid measurement was measured again.
	// +optional
	Retried bool `json:"retried,omitempty"`
}
