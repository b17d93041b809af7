package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkloadSpec is the load tool: exactly one kind, plus the settings every
// tool shares.
// +kubebuilder:validation:XValidation:rule="[has(self.pgbench), has(self.memtier), has(self.redisBenchmark), has(self.ycsb), has(self.k6), has(self.osb), has(self.hammerdb), has(self.custom), has(self.queryBench)].filter(x, x).size() == 1",message="exactly one of pgbench, memtier, redisBenchmark, ycsb, k6, osb, hammerdb, custom or queryBench must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.custom) || (has(self.image) && size(self.image) > 0)",fieldPath=".image",message="custom needs image: the image holding the tool its command runs (custom has no default image)"
// +kubebuilder:validation:XValidation:rule="!has(self.parallelism) || self.parallelism == 1 || !(has(self.osb) || has(self.hammerdb) || has(self.queryBench))",message="parallelism above 1 is not possible for osb, hammerdb and queryBench: one client measures the whole run"
type WorkloadSpec struct {
	// +optional
	Pgbench *PgbenchWorkload `json:"pgbench,omitempty"`
	// +optional
	Memtier *MemtierWorkload `json:"memtier,omitempty"`
	// +optional
	RedisBenchmark *RedisBenchmarkWorkload `json:"redisBenchmark,omitempty"`
	// +optional
	YCSB *YCSBWorkload `json:"ycsb,omitempty"`
	// +optional
	K6 *K6Workload `json:"k6,omitempty"`
	// +optional
	OSB *OSBWorkload `json:"osb,omitempty"`
	// +optional
	HammerDB *HammerDBWorkload `json:"hammerdb,omitempty"`
	// +optional
	Custom *CustomWorkload `json:"custom,omitempty"`
	// +optional
	QueryBench *QueryWorkload `json:"queryBench,omitempty"`

	// Parallelism is the number of load-generator pods of each measurement.
	// They start together (a barrier: each waits until all are running,
	// then all begin at the same instant) and their results are merged:
	// throughputs add, and latency percentiles come from merged histograms
	// where the tool writes one, otherwise they are reported as upper bounds.
	// Per-pod settings (threads, clients, connections) apply to each pod;
	// k6 splits its VUs across the pods with execution segments.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +kubebuilder:default=1
	// +optional
	Parallelism int32 `json:"parallelism,omitempty"`

	// SkipPrepare skips the tool's prepare step (pgbench -i, the YCSB and
	// memtier load, HammerDB's schema build), for a target that already
	// holds the data a previous run prepared. Tools without one ignore it.
	// +optional
	SkipPrepare bool `json:"skipPrepare,omitempty"`

	// Warmup is the first part of every measurement, in the tool's own
	// progress series (pgbench --progress, YCSB's status lines, memtier's
	// per-second statistics, HammerDB's transaction counter), that the
	// stability checks (validity's stalls, dips and drift) leave out: a
	// cold cache or a JIT warming up is not a dip. When set, each
	// measurement also reports the steady-state throughput over the rest,
	// named as the series with steady before it (steadyTransactionsPerSecond,
	// steadyOpsPerSecond, HammerDB's steadyTpm), higher is better, beside
	// the primary metric, compared like any other metric. The tool's own
	// figures still cover the whole run, except where the tool leaves out
	// a ramp-up itself: HammerDB's rampUp is excluded from its NOPM and TPM,
	// and from the stability checks before this warm-up. Unset: nothing is
	// left out (no tool but HammerDB has a warm-up of its own).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('24h')",message="must be a duration between 0s and 24h, such as 30s or 2m"
	// +optional
	Warmup *metav1.Duration `json:"warmup,omitempty"`

	// Image overrides the tool's default (official) image; custom, which
	// has none, requires it.
	// +optional
	Image string `json:"image,omitempty"`

	// Resources of the load-generator container. Setting a CPU limit makes
	// the saturation check relative to it.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// Placement is where the load-generator pods run (the loadgen pool).
	// +optional
	Placement Placement `json:"placement,omitempty"`
}
