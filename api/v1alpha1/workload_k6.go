package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// K6Workload runs a Grafana k6 script.
// +kubebuilder:validation:XValidation:rule="has(self.script) != has(self.scriptConfigMap)",message="exactly one of script or scriptConfigMap must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.stages) || size(self.stages) == 0 || (!has(self.vus) && !has(self.duration))",message="stages ramp the virtual users by themselves: leave vus and duration unset"
type K6Workload struct {
	// ScriptConfigMap names the ConfigMap key holding the test script.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="must name the ConfigMap"
	ScriptConfigMap *corev1.ConfigMapKeySelector `json:"scriptConfigMap,omitempty"`
	// Script is the test script inline, for short scripts.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	Script string `json:"script,omitempty"`
	// VUs is swept (--vus): each value is one step; empty: the script's options.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=100000
	// +optional
	VUs []int32 `json:"vus,omitempty"`
	// Duration (--duration); empty: the script's options.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be a duration between 1s and 24h, such as 60s or 5m"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
	// Stages ramp the virtual users within one measurement (k6's --stage:
	// each stage moves linearly to its target over its duration, the
	// ramping-vus executor). The measurement then reports each stage as
	// if it were a step (results' stages: throughput, error share,
	// latency percentiles from the stage's own histogram, APDEX, the
	// target's CPU over the stage); replaces vus and duration.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Stages []K6Stage `json:"stages,omitempty"`
	// Env is passed to the script as -e NAME=VALUE (__ENV); the target's
	// host and port come as DBPERF_TARGET_HOST and DBPERF_TARGET_PORT, its
	// credentials as DBPERF_TARGET_USERNAME and DBPERF_TARGET_PASSWORD.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Env map[string]string `json:"env,omitempty"`
	// Args are extra arguments of `k6 run`, before the script.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Args []string `json:"args,omitempty"`
	// Metrics declare the unit and direction of the script's custom
	// metrics (Trend, Counter, Rate, Gauge), which k6 cannot tell. Without
	// a declaration a time Trend is a latency (ms, LowerIsBetter) and a
	// Rate or Counter whose name says failure or error is LowerIsBetter,
	// success, ok or pass HigherIsBetter; any other is Neutral, never
	// judged, with a warning.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Metrics []K6Metric `json:"metrics,omitempty"`
}

// K6Stage is one stage of a k6 ramp.
type K6Stage struct {
	// Duration of the stage, in whole seconds.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h') && duration(self).getMilliseconds() % 1000 == 0",message="must be whole seconds between 1s and 24h, such as 30s or 5m"
	Duration metav1.Duration `json:"duration"`
	// Target is the virtual users the stage ends at.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	Target int32 `json:"target"`
}

// K6Metric is the unit and direction of one custom metric of a k6 script.
type K6Metric struct {
	// Name of the metric as the script creates it (new Trend('name')).
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][a-zA-Z0-9_]{0,127}$`
	Name string `json:"name"`
	// Unit of its values, such as items or bytes (a time Trend is in ms).
	// +kubebuilder:validation:Pattern=`^[a-zA-Z%/µ_.-]{0,32}$`
	// +optional
	Unit string `json:"unit,omitempty"`
	// Direction says which way the metric improves.
	Direction Direction `json:"direction"`
}
