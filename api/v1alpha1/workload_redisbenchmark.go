package v1alpha1

// RedisBenchmarkWorkload drives a Redis-compatible server with redis-benchmark
// (or valkey-benchmark), which ships inside the server images.
type RedisBenchmarkWorkload struct {
	// Tests to run (-t), such as ["set", "get"].
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z_,:-]+$`
	// +kubebuilder:default={"set","get"}
	// +optional
	Tests []string `json:"tests,omitempty"`

	// Requests per test (-n).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	// +kubebuilder:default=100000
	// +optional
	Requests int64 `json:"requests,omitempty"`

	// Clients is swept: each value is one step (-c).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=10000
	// +kubebuilder:default={50}
	// +optional
	Clients []int32 `json:"clients,omitempty"`

	// Pipeline depth is swept: each value is one step (-P).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=10000
	// +kubebuilder:default={1}
	// +optional
	Pipeline []int32 `json:"pipeline,omitempty"`

	// DataSizeBytes of SET values (-d).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=536870912
	// +kubebuilder:default=3
	// +optional
	DataSizeBytes int32 `json:"dataSizeBytes,omitempty"`

	// KeySpace makes keys random in [0, KeySpace) (-r); 0 uses one key.
	// +kubebuilder:validation:Minimum=0
	// +optional
	KeySpace int64 `json:"keySpace,omitempty"`

	// Threads of the benchmark client (--threads); 0 keeps it single-threaded.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=256
	// +optional
	Threads int32 `json:"threads,omitempty"`
}
