package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ComparisonOrder is how the child runs of the variants are scheduled.
// +kubebuilder:validation:Enum=Interleaved;Concurrent;Sequential
type ComparisonOrder string

const (
	// OrderInterleaved runs the variants in rounds, one run at a time, the
	// order reversed every other round (A B, B A, A B, …: ABBA), so that
	// slow drift of the platform hits every variant alike, within a round
	// and over the rounds; a round's runs are compared as a pair.
	OrderInterleaved ComparisonOrder = "Interleaved"
	// OrderConcurrent starts one run of every variant at the same time,
	// repetition after repetition: for variants on their own node pools.
	OrderConcurrent ComparisonOrder = "Concurrent"
	// OrderSequential runs every repetition of A, then of B.
	OrderSequential ComparisonOrder = "Sequential"
)

// ComparisonPhase is where a BenchmarkComparison is in its life. Its child
// runs have phases of their own (ComparisonRun.phase is a run's Phase).
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type ComparisonPhase string

const (
	// ComparisonPending: accepted, no child run created yet.
	ComparisonPending ComparisonPhase = "Pending"
	// ComparisonRunning: child runs are being created or are running.
	ComparisonRunning ComparisonPhase = "Running"
	// ComparisonSucceeded: every run has ended and the report is written
	// (whatever the verdicts; failed or invalid measurements are excluded
	// and counted).
	ComparisonSucceeded ComparisonPhase = "Succeeded"
	// ComparisonFailed: the comparison cannot be made (a patch that is not a
	// BenchmarkRun spec, variants that run another tool or whose steps
	// cannot meet, runs that are not comparable), or it compared nothing
	// (every measurement excluded, no metric on both sides); the Compared
	// condition says why, and the report keeps what was measured.
	ComparisonFailed ComparisonPhase = "Failed"
)

// Terminal tells whether a comparison in this phase is finished.
func (p ComparisonPhase) Terminal() bool {
	return p == ComparisonSucceeded || p == ComparisonFailed
}

// ComparisonVerdict is the verdict on one metric, candidate against
// baseline (docs/statistics.md).
// +kubebuilder:validation:Enum=Better;Worse;NoChange;Inconclusive
type ComparisonVerdict string

const (
	// VerdictBetter: significant after the correction, the interval
	// excludes zero and the change reaches minEffectPercent, for the better.
	VerdictBetter ComparisonVerdict = "Better"
	// VerdictWorse: the same, for the worse.
	VerdictWorse ComparisonVerdict = "Worse"
	// VerdictNoChange: the whole interval lies within ± minEffectPercent.
	VerdictNoChange ComparisonVerdict = "NoChange"
	// VerdictInconclusive: anything else (too few runs, unstable, not
	// significant with an interval reaching beyond the margin); the reason says which.
	VerdictInconclusive ComparisonVerdict = "Inconclusive"
)

// Correction of the p-values for comparing many metrics at once.
// +kubebuilder:validation:Enum=Holm;BenjaminiHochberg;None
type Correction string

const (
	// CorrectionHolm controls the family-wise error rate (Holm's step-down).
	CorrectionHolm Correction = "Holm"
	// CorrectionBenjaminiHochberg controls the false discovery rate.
	CorrectionBenjaminiHochberg Correction = "BenjaminiHochberg"
	// CorrectionNone uses each metric's p-value as it is.
	CorrectionNone Correction = "None"
)

// StepPairing says which step of a variant is compared with which step of
// the baseline.
// +kubebuilder:validation:Enum=Auto;ByName;ByPosition
type StepPairing string

const (
	// StepPairingAuto compares steps of the same name when the variants
	// measure the same steps; when every variant measures one step and
	// their names differ (a patch that sets the swept parameter: clients
	// [4] against [1]), that step with that step — the variant is the
	// parameter; anything else is refused before a run is created.
	StepPairingAuto StepPairing = "Auto"
	// StepPairingByName compares only the steps both measure; variants
	// with no step in common are refused.
	StepPairingByName StepPairing = "ByName"
	// StepPairingByPosition compares the i-th step of each variant (a sweep
	// of clients [1, 2, 4] against [2, 4, 8]); variants with different
	// numbers of steps are refused.
	StepPairingByPosition StepPairing = "ByPosition"
)

// AlphaSpending is how a sequential comparison spends its false-verdict
// rate over its looks (stats.Spending).
// +kubebuilder:validation:Enum=OBrienFleming;Pocock
type AlphaSpending string

const (
	// SpendingOBrienFleming spends almost nothing at the first looks: an
	// early stop needs an overwhelming change, and running to the last
	// round costs almost nothing against a fixed design.
	SpendingOBrienFleming AlphaSpending = "OBrienFleming"
	// SpendingPocock spends evenly: earlier stops on moderate changes, a
	// stricter last look.
	SpendingPocock AlphaSpending = "Pocock"
)

// SequentialDecision is what a sequential comparison's last look decided.
// +kubebuilder:validation:Enum=Continue;Changed;Equivalent;MaxRounds
type SequentialDecision string

const (
	// SequentialContinue: another round is needed.
	SequentialContinue SequentialDecision = "Continue"
	// SequentialChanged: every headline is decided and one changed by at
	// least the minimum effect.
	SequentialChanged SequentialDecision = "Changed"
	// SequentialEquivalent: every headline's interval rules out a change
	// of the target effect.
	SequentialEquivalent SequentialDecision = "Equivalent"
	// SequentialMaxRounds: runsPerVariant rounds ran and a headline is
	// still undecided.
	SequentialMaxRounds SequentialDecision = "MaxRounds"
)

// SequentialStopping makes a comparison look at its headlines after every
// round and stop as soon as they are decided (docs/statistics.md,
// "Stopping early"): runsPerVariant becomes the most rounds it runs. Each
// look is a paired analysis of the rounds' log ratios at the level the
// alpha-spending rule allows it, so that looking after every round keeps
// the chance of a false Better or Worse at criteria.alpha.
// +kubebuilder:validation:XValidation:rule="!has(self.targetEffectPercent) || self.targetEffectPercent > 0",message="targetEffectPercent must be above 0"
type SequentialStopping struct {
	// TargetEffectPercent is the change the comparison must be able to
	// tell: once every headline's interval rules out a change this large
	// either way, it stops. Unset, criteria.minEffectPercent.
	// +optional
	TargetEffectPercent *Percent `json:"targetEffectPercent,omitempty"`
	// MinRounds is the first look: no decision on fewer rounds.
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=50
	// +kubebuilder:default=3
	// +optional
	MinRounds int32 `json:"minRounds,omitempty"`
	// Spending of alpha over the looks: OBrienFleming (the default) or
	// Pocock.
	// +kubebuilder:default=OBrienFleming
	// +optional
	Spending AlphaSpending `json:"spending,omitempty"`
}

// CanaryFigure names a figure of the load generators' canary.
// +kubebuilder:validation:Enum=CPU;DiskWrite;DiskSync
type CanaryFigure string

const (
	// CanaryCPU is canaryCPUMegabytesPerSecond: one thread's hashing.
	CanaryCPU CanaryFigure = "CPU"
	// CanaryDiskWrite is canaryDiskWriteMegabytesPerSecond: writes
	// flushed to the scratch volume.
	CanaryDiskWrite CanaryFigure = "DiskWrite"
	// CanaryDiskSync is canaryDiskSyncMillis: a 4 KiB write and its
	// fsync.
	CanaryDiskSync CanaryFigure = "DiskSync"
)

// CovariateSpec is the covariate a comparison adjusts its headline by.
type CovariateSpec struct {
	// Canary is the canary figure: CPU, DiskWrite or DiskSync — the one
	// closest to what limits the workload (CPU for an in-memory store's
	// client-bound load, DiskSync for a commit-bound one).
	Canary CanaryFigure `json:"canary"`
}

// Variant is one side of a comparison: the template with a patch applied.
type Variant struct {
	// Name of the variant, such as standard-v3 or pg17.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=30
	Name string `json:"name"`
	// Patch is a JSON merge patch (RFC 7386) applied to the template's
	// BenchmarkRunSpec: a node pool, an image, database or tool parameters.
	// The comparison refuses results whose workload settings differ in
	// anything but the paths the patches set.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Patch *apiextensionsv1.JSON `json:"patch,omitempty"`
}

// ComparisonCriteria decide the verdicts.
type ComparisonCriteria struct {
	// Alpha is the significance level for the p-values (adjusted for the
	// number of metrics) and 1 minus the confidence of the intervals: a
	// number above 0 and below 0.5, such as 0.05.
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMaximum=true
	// +kubebuilder:validation:Maximum=0.5
	// +kubebuilder:default=0.05
	// +optional
	Alpha float64 `json:"alpha,omitempty"`
	// MinEffectPercent is the smallest change worth Better or Worse, and
	// the margin within which NoChange is declared; 0 is none: any
	// significant change is Better or Worse.
	// +kubebuilder:default=1
	// +optional
	MinEffectPercent *Percent `json:"minEffectPercent,omitempty"`
	// MaxCoefficientOfVariationPercent makes a metric Inconclusive when a
	// variant's measurements vary more; 0 disables.
	// +optional
	MaxCoefficientOfVariationPercent Percent `json:"maxCoefficientOfVariationPercent,omitempty"`
	// Correction for comparing many metrics at once: Holm (family-wise
	// error), BenjaminiHochberg (false discovery rate) or None.
	// +kubebuilder:default=Holm
	// +optional
	Correction Correction `json:"correction,omitempty"`
	// OperationCorrection is the correction over every metric other than
	// the headline (the primary metric of each step): each operation's
	// throughput, percentiles and errors, tested by Welch's t on
	// logarithms. The default, BenjaminiHochberg, controls the false
	// discovery rate, which keeps a table of tens to hundreds of
	// operations useful at 5 vs 5 repetitions (docs/statistics.md).
	// +kubebuilder:default=BenjaminiHochberg
	// +optional
	OperationCorrection Correction `json:"operationCorrection,omitempty"`
	// Metrics keeps, of the tool's metrics, only those whose names match
	// one of these patterns (shell patterns: "latencyP9*"); empty keeps
	// every metric. The primary metric is always kept. Leaving metrics
	// out also leaves them out of the corrections.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	Metrics []string `json:"metrics,omitempty"`
	// Operations keeps only the operations whose names match one of these
	// patterns ("NewOrder", "GET*"); empty keeps every operation. The
	// figures of the whole run (no operation) are always kept.
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	Operations []string `json:"operations,omitempty"`
}

// BenchmarkComparisonSpec is a run template, its variants, and how to run them.
// +kubebuilder:validation:XValidation:rule="!has(self.covariate) || self.order != 'Sequential'",message="covariate: the canary adjusts the change within each round; order must be Interleaved or Concurrent"
// +kubebuilder:validation:XValidation:rule="!has(self.sequential) || self.order != 'Sequential'",message="sequential: stopping early looks after every round; order must be Interleaved or Concurrent"
// +kubebuilder:validation:XValidation:rule="!has(self.sequential) || !has(self.sequential.minRounds) || self.sequential.minRounds <= self.runsPerVariant",message="sequential.minRounds must be at most runsPerVariant, the most rounds"
// +kubebuilder:validation:XValidation:rule="!has(self.sequential) || has(self.sequential.targetEffectPercent) || (has(self.criteria.minEffectPercent) && self.criteria.minEffectPercent > 0)",message="sequential.targetEffectPercent is needed when criteria.minEffectPercent is 0"
// +kubebuilder:validation:XValidation:rule="self.variants.exists(v, v.name == self.baseline)",message="baseline must name one of the variants"
// +kubebuilder:validation:XValidation:rule="self.variants.all(v, self.variants.exists_one(w, w.name == v.name))",message="variant names must be unique"
type BenchmarkComparisonSpec struct {
	// Template is the BenchmarkRun spec every variant starts from.
	Template BenchmarkRunSpec `json:"template"`
	// Variants are the things compared; each gets its own BenchmarkRuns.
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	Variants []Variant `json:"variants"`
	// Baseline names the variant the others are compared against.
	Baseline string `json:"baseline"`
	// Order of the runs.
	// +kubebuilder:default=Interleaved
	// +optional
	Order ComparisonOrder `json:"order,omitempty"`
	// RunsPerVariant is how many runs each variant gets (BenchmarkRuns
	// <name>-<variant>-<i>). Every run measures each step
	// template.repetitions times; all valid measurements of a variant form
	// its sample.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	// +kubebuilder:default=5
	// +optional
	RunsPerVariant int32 `json:"runsPerVariant,omitempty"`
	// StepPairing says which steps are compared when the variants' patches
	// change the sweep.
	// +kubebuilder:default=Auto
	// +optional
	StepPairing StepPairing `json:"stepPairing,omitempty"`
	// Criteria for the verdicts; omitted, every criterion takes its default.
	// +kubebuilder:default={}
	// +optional
	Criteria ComparisonCriteria `json:"criteria,omitempty"`
	// Sequential, when set, stops the comparison once its rounds have
	// decided every headline, runsPerVariant rounds at most; it needs
	// rounds (order Interleaved or Concurrent).
	// +optional
	Sequential *SequentialStopping `json:"sequential,omitempty"`
	// Covariate, when set, runs every run with a canary (template.canary,
	// made so when absent) and adjusts each headline's paired change by
	// the canary figure named (CUPED on the rounds' log ratios: the part of
	// a round's ratio its runs' nodes explain is taken out), reporting the
	// adjusted change beside the independent and paired ones with the
	// variance the canary removed. It needs rounds (order Interleaved or
	// Concurrent), and is valid when the canary measures what both
	// variants share; a canary that moved with the variant is reported,
	// not used (docs/statistics.md).
	// +optional
	Covariate *CovariateSpec `json:"covariate,omitempty"`
	// DeletionPolicy says what becomes of the comparison's runs and report
	// ConfigMap when it is deleted: Retain (the default) releases them, so
	// that they stay (runs in progress run to completion), marked with the
	// annotation bench.dbperf.io/released-from; Delete deletes them with
	// the comparison. A comparison a BenchmarkSchedule still controls
	// follows the schedule instead: the schedule's history limits delete it
	// with its runs, and the schedule's deletionPolicy applies when the
	// schedule is deleted (Retain releases the comparison, whose own policy
	// applies from then on). It is the one field of the spec that may
	// change after creation.
	// +kubebuilder:default=Retain
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// ComparisonRun is one child run.
type ComparisonRun struct {
	Name    string `json:"name"`
	Variant string `json:"variant"`
	// Index counts a variant's runs from 1.
	Index int32 `json:"index"`
	// Phase of the run (a BenchmarkRun's phase).
	// +optional
	Phase Phase `json:"phase,omitempty"`
}

// MetricComparison is one row of the comparison: a metric of a step,
// candidate against baseline.
type MetricComparison struct {
	Candidate string `json:"candidate"`
	// Step is the baseline's step.
	Step string `json:"step"`
	// CandidateStep is the candidate's step when spec.stepPairing paired
	// steps of other names.
	// +optional
	CandidateStep string `json:"candidateStep,omitempty"`
	Metric        string `json:"metric"`
	// +optional
	Operation string    `json:"operation,omitempty"`
	Unit      string    `json:"unit"`
	Direction Direction `json:"direction"`
	// BaselineMedian and CandidateMedian over the valid measurements.
	BaselineMedian  float64 `json:"baselineMedian"`
	CandidateMedian float64 `json:"candidateMedian"`
	BaselineN       int32   `json:"baselineN"`
	CandidateN      int32   `json:"candidateN"`
	// DeltaPercent is the change of the candidate against the baseline.
	// +optional
	DeltaPercent *float64 `json:"deltaPercent,omitempty"`
	// CILowPercent and CIHighPercent bound its 95 % interval; absent when
	// unbounded (too few repetitions).
	// +optional
	CILowPercent *float64 `json:"ciLowPercent,omitempty"`
	// +optional
	CIHighPercent *float64 `json:"ciHighPercent,omitempty"`
	// PValue adjusted for the number of metrics.
	PValue  float64           `json:"pValue"`
	Verdict ComparisonVerdict `json:"verdict"`
	// Reason of the verdict, in words.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// BenchmarkComparisonStatus is what the comparison has run and found.
// OverallVerdict is a comparison's one verdict:
//   - Regression: a judged metric of a candidate got worse (its headline,
//     or an operation past the family's correction);
//   - Improvement: some got better and none worse;
//   - Pass: every headline was shown unchanged (its interval within the
//     minimum effect) and nothing changed;
//   - Inconclusive: a headline could not be judged either way (too few
//     repetitions, too noisy);
//   - Invalid: nothing was compared (every measurement excluded, the
//     variants not comparable, a patch refused).
//
// +kubebuilder:validation:Enum=Pass;Regression;Improvement;Inconclusive;Invalid
type OverallVerdict string

const (
	OverallPass         OverallVerdict = "Pass"
	OverallRegression   OverallVerdict = "Regression"
	OverallImprovement  OverallVerdict = "Improvement"
	OverallInconclusive OverallVerdict = "Inconclusive"
	OverallInvalid      OverallVerdict = "Invalid"
)

type BenchmarkComparisonStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase: Pending, Running, Succeeded (compared) or Failed.
	// +optional
	Phase ComparisonPhase `json:"phase,omitempty"`
	// Progress counts finished runs: "4/10".
	// +optional
	Progress string `json:"progress,omitempty"`
	// +optional
	Runs []ComparisonRun `json:"runs,omitempty"`
	// Results holds the primary metric of every step per candidate; every
	// metric is in the report ConfigMap.
	// +optional
	Results []MetricComparison `json:"results,omitempty"`
	// Summary counts the verdicts of all metrics: "2 better, 1 worse, …".
	// +optional
	Summary string `json:"summary,omitempty"`
	// Verdict is the comparison's one verdict over every candidate, the
	// one a pipeline gates on (`kubectl dbperf wait`); empty until every
	// run has ended.
	// +optional
	Verdict OverallVerdict `json:"verdict,omitempty"`
	// Headline says it first: each candidate's verdict with the metrics
	// that decided it, largest change first (the report's summary has the
	// rest: what was excluded, what restates what, what is bimodal).
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Headline string `json:"headline,omitempty"`
	// ExcludedMeasurements counts failed and invalid measurements left out.
	// +optional
	ExcludedMeasurements int32 `json:"excludedMeasurements,omitempty"`
	// Sequential is where a sequential comparison's looks stand (absent
	// without spec.sequential, and before its first look).
	// +optional
	Sequential *SequentialStatus `json:"sequential,omitempty"`
	// ReportConfigMap holds report.json, report.md and report.html.
	// +optional
	ReportConfigMap string `json:"reportConfigMap,omitempty"`
	// Rejections are the rejected measurements of its runs the report left
	// out ("run: what"); a rejection made or undone after the comparison
	// ended (`kubectl dbperf reject`) makes it compare again.
	// +kubebuilder:validation:MaxItems=1000
	// +listType=atomic
	// +optional
	Rejections []string `json:"rejections,omitempty"`
	// Conditions of the comparison:
	//   - Compared: True once every run has ended and the report is written
	//     with at least one metric compared for every candidate (reason
	//     Compared); False while runs are in progress (Running), when a
	//     variant's patch or its run is refused (InvalidPatch), when the
	//     variants cannot be compared — another tool, steps that cannot meet,
	//     runs that differ in more than the patches — (NotComparable, before
	//     any run is created when the patches show it), when every run ended
	//     but nothing was compared (NothingCompared: every measurement
	//     excluded, no metric on both sides), or when a child run's name is
	//     taken by an object the comparison does not own (NameConflict);
	//     Unknown (absent) before the first reconcile.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SequentialStatus is a sequential comparison's last look.
type SequentialStatus struct {
	// Rounds is the number of rounds the last look saw: where the
	// comparison stopped, once it has.
	Rounds int32 `json:"rounds"`
	// MaxRounds is spec.runsPerVariant.
	MaxRounds int32 `json:"maxRounds"`
	// Decision of the last look.
	Decision SequentialDecision `json:"decision"`
	// Reason says why, headline by headline.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Reason string `json:"reason,omitempty"`
	// FixedDesignRounds is the rounds a fixed paired design would have
	// needed to tell the target effect at 95 % power with the noise the
	// rounds showed (the largest over the headlines; -1 beyond a
	// thousand); absent when unknown.
	// +optional
	FixedDesignRounds *int32 `json:"fixedDesignRounds,omitempty"`
	// FixedDesignMeasurementsPerVariant is the same for the independent
	// design, in measurements per variant (runs, when each run measures a
	// step once).
	// +optional
	FixedDesignMeasurementsPerVariant *int32 `json:"fixedDesignMeasurementsPerVariant,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=benchcmp;benchcmps,categories=dbperf
// +kubebuilder:printcolumn:name="Baseline",type=string,JSONPath=`.spec.baseline`
// +kubebuilder:printcolumn:name="Order",type=string,JSONPath=`.spec.order`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.verdict`
// +kubebuilder:printcolumn:name="Summary",type=string,JSONPath=`.status.summary`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// BenchmarkComparison runs a template as several variants, in a chosen
// order, and compares every variant with the baseline per step and metric.
type BenchmarkComparison struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec cannot change once created (the runs already made belong to
	// it), but for deletionPolicy, which says what becomes of them.
	// Every other field is required or defaulted, so always there.
	// +kubebuilder:validation:XValidation:rule="self.template == oldSelf.template && self.variants == oldSelf.variants && self.baseline == oldSelf.baseline && self.order == oldSelf.order && self.runsPerVariant == oldSelf.runsPerVariant && self.stepPairing == oldSelf.stepPairing && self.criteria == oldSelf.criteria && has(self.sequential) == has(oldSelf.sequential) && (!has(self.sequential) || self.sequential == oldSelf.sequential) && has(self.covariate) == has(oldSelf.covariate) && (!has(self.covariate) || self.covariate == oldSelf.covariate)",message="spec is immutable but for deletionPolicy: create a new BenchmarkComparison instead"
	Spec   BenchmarkComparisonSpec   `json:"spec"`
	Status BenchmarkComparisonStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BenchmarkComparisonList lists BenchmarkComparisons.
type BenchmarkComparisonList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkComparison `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BenchmarkComparison{}, &BenchmarkComparisonList{})
}
