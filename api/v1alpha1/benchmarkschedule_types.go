package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy says what a trigger does while a run of the schedule is active.
// +kubebuilder:validation:Enum=Forbid;Allow;Replace
type ConcurrencyPolicy string

const (
	// ConcurrencyForbid: a cron trigger is skipped; a template change waits
	// for the active run and then starts exactly one run.
	ConcurrencyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyAllow starts the new run alongside (node pools may still queue it).
	ConcurrencyAllow ConcurrencyPolicy = "Allow"
	// ConcurrencyReplace deletes the active run and starts the new one.
	ConcurrencyReplace ConcurrencyPolicy = "Replace"
)

// RegressionMethod decides whether the newest result is a regression.
// +kubebuilder:validation:Enum=Threshold;ChangePoint
type RegressionMethod string

const (
	// RegressionThreshold compares the newest valid run with the median of
	// the baseline runs: worse by at least thresholdPercent is a regression.
	RegressionThreshold RegressionMethod = "Threshold"
	// RegressionChangePoint looks for change points in the history
	// (E-divisive means with a permutation test and Welch pruning); the
	// latest one, in the worse direction and at least minEffectPercent,
	// is a regression introduced by the run where it starts.
	RegressionChangePoint RegressionMethod = "ChangePoint"
)

// RunTemplate is the BenchmarkRun a schedule creates.
type RunTemplate struct {
	// Labels for the runs, such as bench.dbperf.io/release: v1.4.2 (the
	// release label of their history entries and metrics).
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	Spec   BenchmarkRunSpec  `json:"spec"`
}

// ComparisonTemplate is the BenchmarkComparison a schedule creates.
type ComparisonTemplate struct {
	// Labels for the comparisons (and the release label of their history entries).
	// +optional
	Labels map[string]string       `json:"labels,omitempty"`
	Spec   BenchmarkComparisonSpec `json:"spec"`
}

// RegressionPolicy says what counts as a regression.
type RegressionPolicy struct {
	// Metric to watch; default the workload's primary metric.
	// +optional
	Metric string `json:"metric,omitempty"`
	// Operation of the metric, such as GET or Totals; optional.
	// +optional
	Operation string `json:"operation,omitempty"`
	// Step to watch, such as clients=40; default the step of the run's
	// headline number.
	// +optional
	Step string `json:"step,omitempty"`
	// +kubebuilder:default=Threshold
	// +optional
	Method RegressionMethod `json:"method,omitempty"`
	// ThresholdPercent for the Threshold method.
	// +kubebuilder:default=5
	// +optional
	ThresholdPercent Percent `json:"thresholdPercent,omitempty"`
	// MinEffectPercent for the ChangePoint method: smaller shifts are noise.
	// +kubebuilder:default=2
	// +optional
	MinEffectPercent Percent `json:"minEffectPercent,omitempty"`
	// BaselineRuns is how many earlier valid runs form the baseline.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=5
	// +optional
	BaselineRuns int32 `json:"baselineRuns,omitempty"`
	// BaselineSelector restricts the baseline to runs with these labels,
	// such as the previous release.
	// +optional
	BaselineSelector *metav1.LabelSelector `json:"baselineSelector,omitempty"`
}

// BenchmarkScheduleSpec says when to run what, and what a regression is.
// +kubebuilder:validation:XValidation:rule="has(self.schedule) || !has(self.onTemplateChange) || self.onTemplateChange",message="a schedule needs a cron schedule or onTemplateChange"
// +kubebuilder:validation:XValidation:rule="has(self.runTemplate) != has(self.comparisonTemplate)",message="exactly one of runTemplate or comparisonTemplate must be set"
type BenchmarkScheduleSpec struct {
	// Schedule in cron format ("0 3 * * *"), in UTC; optional.
	// +optional
	Schedule string `json:"schedule,omitempty"`
	// OnTemplateChange starts one run whenever the run template changes
	// (a GitOps commit that bumps a release image).
	// +kubebuilder:default=true
	// +optional
	OnTemplateChange *bool `json:"onTemplateChange,omitempty"`
	// RunOnCreate starts a run when the schedule is created.
	// +optional
	RunOnCreate bool `json:"runOnCreate,omitempty"`
	// Suspend stops new triggers; runs in progress go on.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// +kubebuilder:default=Forbid
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
	// RunTemplate is the run to create; its history records the watched
	// metric and a regression is judged by spec.regression.method.
	// +optional
	RunTemplate *RunTemplate `json:"runTemplate,omitempty"`
	// ComparisonTemplate is the comparison to create instead (for example a
	// release candidate against the current release on every change); its
	// history records Δ % of the watched metric for the first candidate, and
	// a regression is that metric's verdict Worse.
	// +optional
	ComparisonTemplate *ComparisonTemplate `json:"comparisonTemplate,omitempty"`
	// SuccessfulRunsHistoryLimit and FailedRunsHistoryLimit bound the finished
	// runs kept (their numbers stay in status.history).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=10
	// +optional
	SuccessfulRunsHistoryLimit *int32 `json:"successfulRunsHistoryLimit,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=3
	// +optional
	FailedRunsHistoryLimit *int32 `json:"failedRunsHistoryLimit,omitempty"`
	// HistoryLimit bounds status.history.
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=500
	// +kubebuilder:default=100
	// +optional
	HistoryLimit int32 `json:"historyLimit,omitempty"`
	// Regression policy; without it no Regressed condition is computed.
	// +optional
	Regression *RegressionPolicy `json:"regression,omitempty"`
}

// HistoryEntry is one finished run of a schedule.
type HistoryEntry struct {
	// Run is the BenchmarkRun (or BenchmarkComparison) of this entry.
	Run       string      `json:"run"`
	StartTime metav1.Time `json:"startTime"`
	// Phase of the run, or of the comparison (its phases are a subset).
	Phase Phase `json:"phase"`
	// +optional
	Release string `json:"release,omitempty"`
	// Value of the watched metric (the median over the run's valid repetitions).
	// +optional
	Value *float64 `json:"value,omitempty"`
	// +optional
	Unit string `json:"unit,omitempty"`
	// +optional
	Direction Direction `json:"direction,omitempty"`
	// Verdict of the watched metric, for comparison schedules.
	// +optional
	Verdict ComparisonVerdict `json:"verdict,omitempty"`
	// Rejected says that a person rejected measurements of the run
	// (`kubectl dbperf reject`): Value is then the median over the others,
	// or absent when the whole run was rejected, which leaves it out of the
	// regression judgement.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Rejected string `json:"rejected,omitempty"`
	// ChangePoint marks the first run of a new level found by change-point detection.
	// +optional
	ChangePoint bool `json:"changePoint,omitempty"`
}

// BenchmarkScheduleStatus is the schedule's memory.
type BenchmarkScheduleStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// LastScheduleTime is the last cron trigger handled.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// TemplateHash is the hash of the template the last template-triggered run used.
	// +optional
	TemplateHash string `json:"templateHash,omitempty"`
	// Active runs.
	// +optional
	Active []string `json:"active,omitempty"`
	// LastRun is the newest run created.
	// +optional
	LastRun string `json:"lastRun,omitempty"`
	// History of finished runs, oldest first, bounded by spec.historyLimit.
	// +optional
	History []HistoryEntry `json:"history,omitempty"`
	// Conditions of the schedule:
	//   - Regressed (only with spec.regression): True when the newest result
	//     is a regression by the policy (reason Regression; the message names
	//     the metric, the change and the run that introduced it); False when
	//     it is not (NoRegression) or cannot be judged yet
	//     (NotEnoughHistory); Unknown (absent) without spec.regression.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=benchsched;benchscheds,categories=dbperf
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Last run",type=string,JSONPath=`.status.lastRun`
// +kubebuilder:printcolumn:name="Regressed",type=string,JSONPath=`.status.conditions[?(@.type=="Regressed")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// BenchmarkSchedule runs a BenchmarkRun template on a cron and when the
// template changes, keeps a history of its headline numbers and raises a
// Regressed condition.
type BenchmarkSchedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BenchmarkScheduleSpec   `json:"spec"`
	Status BenchmarkScheduleStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BenchmarkScheduleList lists BenchmarkSchedules.
type BenchmarkScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkSchedule `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BenchmarkSchedule{}, &BenchmarkScheduleList{})
}
