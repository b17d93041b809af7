package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// MemtierWorkload drives a Redis-compatible server with memtier_benchmark.
type MemtierWorkload struct {
	// Protocol spoken to the server.
	// +kubebuilder:validation:Enum=redis;resp2;resp3;memcache_text;memcache_binary
	// +kubebuilder:default=redis
	// +optional
	Protocol string `json:"protocol,omitempty"`

	// Ratio of SET to GET requests, such as "1:10".
	// +kubebuilder:validation:Pattern=`^[0-9]+:[0-9]+$`
	// +kubebuilder:default="1:10"
	// +optional
	Ratio string `json:"ratio,omitempty"`

	// KeyPattern for SET:GET, such as "R:R" or "G:G".
	// +kubebuilder:validation:Pattern=`^[RSGP]:[RSGP]$`
	// +kubebuilder:default="R:R"
	// +optional
	KeyPattern string `json:"keyPattern,omitempty"`

	// KeyMinimum and KeyMaximum bound the key range (memtier refuses 0).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	KeyMinimum int64 `json:"keyMinimum,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1000000
	// +optional
	KeyMaximum int64 `json:"keyMaximum,omitempty"`

	// DataSizeBytes of each value (--data-size).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=67108864
	// +kubebuilder:default=32
	// +optional
	DataSizeBytes int32 `json:"dataSizeBytes,omitempty"`

	// Threads is swept: each value is one step (-t).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=256
	// +kubebuilder:default={4}
	// +optional
	Threads []int32 `json:"threads,omitempty"`

	// Clients per thread (-c).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +kubebuilder:default=50
	// +optional
	Clients int32 `json:"clients,omitempty"`

	// Pipeline depth is swept: each value is one step.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=10000
	// +kubebuilder:default={1}
	// +optional
	Pipeline []int32 `json:"pipeline,omitempty"`

	// Duration of each measurement (--test-time).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be a duration between 1s and 24h, such as 60s or 5m"
	Duration metav1.Duration `json:"duration"`

	// Commands replace the SET/GET mix by arbitrary commands, such as
	// "INCR __key__" (--command); each gets its own row of results.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Commands []MemtierCommand `json:"commands,omitempty"`
}

// MemtierCommand is one custom command of a memtier run.
type MemtierCommand struct {
	// Command line with __key__ and __data__ placeholders.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Command string `json:"command"`
	// Ratio weight of this command.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	// +kubebuilder:default=1
	// +optional
	Ratio int32 `json:"ratio,omitempty"`
	// KeyPattern of this command: R, S, G or P.
	// +kubebuilder:validation:Enum=R;S;G;P
	// +kubebuilder:default=R
	// +optional
	KeyPattern string `json:"keyPattern,omitempty"`
}
