package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RuleCondition is what a series rule asks of its series.
// +kubebuilder:validation:Enum=Above;Below;Percentile;Imbalance
type RuleCondition string

const (
	// RuleAbove breaks when the series stays above the threshold for
	// longer than the rule's duration.
	RuleAbove RuleCondition = "Above"
	// RuleBelow breaks when the series stays below the threshold for
	// longer than the rule's duration.
	RuleBelow RuleCondition = "Below"
	// RulePercentile breaks when the rule's percentile of the series'
	// samples over the window is above the threshold.
	RulePercentile RuleCondition = "Percentile"
	// RuleImbalance breaks when one member of a family of series (a core
	// of cpuBusyPercent.cpuN, a device of diskBusyPercent.<dev>) has a mean
	// above the threshold times the mean of the family; with a role as the
	// subject (host, node, target, loadgen), when one subject of that role
	// (the busiest host) does against the role's subjects.
	RuleImbalance RuleCondition = "Imbalance"
)

// RuleAction is what a broken rule does to the measurement.
// +kubebuilder:validation:Enum=Invalidate;Warn
type RuleAction string

const (
	RuleInvalidate RuleAction = "Invalidate"
	RuleWarn       RuleAction = "Warn"
)

// SeriesRule judges one measurement on a series it recorded (docs/
// telemetry.md, "Rules over time"): "sessionsActive of the server above
// 40 for 5m", "the p95 of host/db-01's cpuBusyPercent above 90", "a core
// of host/db-01 busier than 3 times the mean". A broken rule names the
// series, the moment and the figure.
// +kubebuilder:validation:XValidation:rule="self.condition == 'Percentile' ? has(self.percentile) : !has(self.percentile)",message="percentile is set for, and only for, the Percentile condition"
// +kubebuilder:validation:XValidation:rule="!has(self.forDuration) || self.condition == 'Above' || self.condition == 'Below'",message="forDuration is for the Above and Below conditions"
// +kubebuilder:validation:XValidation:rule="self.condition != 'Imbalance' || self.threshold > 1.0",message="an Imbalance threshold is a factor above 1"
type SeriesRule struct {
	// Name of the rule, in the reasons and warnings it gives.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// Series is the name of a recorded series: sessionsActive,
	// cpuBusyPercent, cpuCores, diskAwaitMillis.vda, memoryUsedBytes …
	// (docs/telemetry.md lists every source's). For Imbalance, the family's
	// base name: cpuBusyPercent compares cpuBusyPercent.cpu0, .cpu1, ….
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Series string `json:"series"`

	// Subject is whose series: server, target, target/<pod>,
	// loadgen/<pod>, node/<name>, host/<name>. Empty: every subject that
	// recorded the series, each judged alone. For Imbalance, a role (host,
	// node, target, loadgen) compares that role's subjects with each other.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Subject string `json:"subject,omitempty"`

	// Condition is Above, Below, Percentile or Imbalance.
	Condition RuleCondition `json:"condition"`

	// Threshold in the series' unit (sessions, %, ms, bytes); for
	// Imbalance, the factor over the family's mean (2 is twice the mean).
	Threshold float64 `json:"threshold"`

	// ForDuration is how long an Above or Below condition must hold
	// before the rule breaks: consecutive samples beyond the threshold
	// covering longer than this (each sample covers the interval up to it).
	// Unset: any one sample beyond it.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be between 1s and 24h"
	// +optional
	ForDuration *metav1.Duration `json:"forDuration,omitempty"`

	// Percentile of the window's samples a Percentile condition compares
	// with the threshold, by nearest rank (a sample that was measured).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Percentile *int32 `json:"percentile,omitempty"`

	// Action of a broken rule: Invalidate (the default) makes the
	// measurement Invalid, Warn only reports it.
	// +kubebuilder:default=Invalidate
	// +optional
	Action RuleAction `json:"action,omitempty"`
}

// TargetCPUStatistic is which figure of the target's CPU
// validity.maxTargetCPUPercent judges.
// +kubebuilder:validation:Enum=Mean;P95
type TargetCPUStatistic string

const (
	TargetCPUMean TargetCPUStatistic = "Mean"
	TargetCPUP95  TargetCPUStatistic = "P95"
)
