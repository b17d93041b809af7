package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// YCSBWorkload drives a key-value or document store with the YCSB client.
// +kubebuilder:validation:XValidation:rule="has(self.coreWorkload) || has(self.properties)",message="set coreWorkload (a-f) or properties (a custom property set)"
type YCSBWorkload struct {
	// Binding is the YCSB database binding: mongodb, redis, jdbc, or basic
	// (BasicDB: the client loop without a database, to measure the client).
	// +kubebuilder:validation:Enum=mongodb;redis;jdbc;basic
	Binding string `json:"binding"`

	// CoreWorkload is one of YCSB's core workloads: a (50/50 read/update),
	// b (95/5), c (read only), d (read latest), e (short scans), f
	// (read-modify-write).
	// +kubebuilder:validation:Enum=a;b;c;d;e;f
	// +optional
	CoreWorkload string `json:"coreWorkload,omitempty"`

	// Properties are passed as -p key=value after the core workload, so they
	// extend or override it (a custom property set without workload).
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Properties map[string]string `json:"properties,omitempty"`

	// RecordCount is the number of records the load step inserts.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1000000
	// +optional
	RecordCount int64 `json:"recordCount,omitempty"`

	// OperationCount is the number of operations of each run step.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=5000000
	// +optional
	OperationCount int64 `json:"operationCount,omitempty"`

	// Threads is swept: each value is one step (-threads).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=4096
	// +kubebuilder:default={32}
	// +optional
	Threads []int32 `json:"threads,omitempty"`

	// LoadThreads of the load step.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	// +kubebuilder:default=32
	// +optional
	LoadThreads int32 `json:"loadThreads,omitempty"`

	// TargetOpsPerSecond is the throughput the client aims at (-target);
	// 0 means as fast as possible.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TargetOpsPerSecond int64 `json:"targetOpsPerSecond,omitempty"`

	// MaxExecutionTime stops a run step after this long, in whole seconds
	// (maxexecutiontime).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h') && duration(self).getMilliseconds() % 1000 == 0",message="must be whole seconds between 1s and 24h, such as 60s or 5m"
	// +optional
	MaxExecutionTime *metav1.Duration `json:"maxExecutionTime,omitempty"`

	// Percentiles reported besides 95 and 99 (hdrhistogram.percentiles),
	// such as ["50", "99.9"].
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Pattern=`^[0-9]{1,2}([.][0-9]{1,3})?$`
	// +optional
	Percentiles []string `json:"percentiles,omitempty"`
}
