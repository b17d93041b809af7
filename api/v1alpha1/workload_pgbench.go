package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// PgbenchWorkload drives PostgreSQL with pgbench.
// +kubebuilder:validation:XValidation:rule="!has(self.jobs) || self.clients.all(c, c >= self.jobs)",message="jobs must not exceed any clients value"
type PgbenchWorkload struct {
	// Scale is the pgbench scale factor used by the init step (-s).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +kubebuilder:default=10
	// +optional
	Scale int32 `json:"scale,omitempty"`

	// Clients is swept: each value is one step (-c).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=10000
	Clients []int32 `json:"clients"`

	// Jobs is the number of pgbench worker threads (-j).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +optional
	Jobs *int32 `json:"jobs,omitempty"`

	// Duration of each measurement (-T).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be a duration between 1s and 24h, such as 60s or 5m"
	Duration metav1.Duration `json:"duration"`

	// BuiltinScript selects a built-in script (-b); ignored with Script.
	// +kubebuilder:validation:Enum=tpcb-like;simple-update;select-only
	// +kubebuilder:default=tpcb-like
	// +optional
	BuiltinScript string `json:"builtinScript,omitempty"`

	// Script is a custom pgbench script (-f); it replaces BuiltinScript.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	Script string `json:"script,omitempty"`

	// Protocol is the query protocol (-M).
	// +kubebuilder:validation:Enum=simple;extended;prepared
	// +kubebuilder:default=simple
	// +optional
	Protocol string `json:"protocol,omitempty"`

	// RateLimitPerSecond limits the transactions per second (-R) of the
	// whole measurement: with workload.parallelism its load generators
	// split it exactly (the remainder one each to the first ones). Absent
	// means as fast as possible.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000000
	// +optional
	RateLimitPerSecond *int32 `json:"rateLimitPerSecond,omitempty"`

	// LatencyLimit is --latency-limit: transactions over it are counted
	// (and, with a rate limit, those already late at their scheduled start
	// are skipped and counted), which is how a capacity latency rule judges
	// pgbench exactly (status.capacity).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1ms') && duration(self) <= duration('1h')",message="must be a duration between 1ms and 1h, such as 20ms"
	// +optional
	LatencyLimit *metav1.Duration `json:"latencyLimit,omitempty"`

	// ProgressInterval prints progress this often (-P, whole seconds): the
	// time series of the run; 0s turns it off.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('1h') && duration(self).getMilliseconds() % 1000 == 0",message="must be whole seconds between 0s and 1h, such as 5s"
	// +kubebuilder:default="5s"
	// +optional
	ProgressInterval *metav1.Duration `json:"progressInterval,omitempty"`

	// PerStatementLatencies reports the latency of each statement (-r).
	// +kubebuilder:default=true
	// +optional
	PerStatementLatencies *bool `json:"perStatementLatencies,omitempty"`
}
