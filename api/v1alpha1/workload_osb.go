package v1alpha1

// OSBWorkload runs OpenSearch Benchmark against the target cluster
// (--pipeline=benchmark-only).
type OSBWorkload struct {
	// Name of the OSB workload (--workload), such as http_logs.
	// +kubebuilder:validation:Pattern=`^[a-z0-9_-]+$`
	// +kubebuilder:default=http_logs
	// +optional
	Name string `json:"name,omitempty"`
	// TestProcedure, such as append-no-conflicts-index-only.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_-]+$`
	// +optional
	TestProcedure string `json:"testProcedure,omitempty"`
	// IncludeTasks limits the run to these tasks (--include-tasks).
	// +kubebuilder:validation:MaxItems=32
	// +optional
	IncludeTasks []string `json:"includeTasks,omitempty"`
	// WorkloadParams (--workload-params key:value,…).
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	WorkloadParams map[string]string `json:"workloadParams,omitempty"`
	// ClientOptions (--client-options key:value,…), besides the TLS and
	// credentials the operator sets from the target.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	ClientOptions map[string]string `json:"clientOptions,omitempty"`
	// Clients is swept: each value is one step, passed as the workload
	// parameter named by ClientsParam.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=100000
	// +optional
	Clients []int32 `json:"clients,omitempty"`
	// ClientsParam is the workload parameter the clients sweep sets.
	// +kubebuilder:default=bulk_indexing_clients
	// +optional
	ClientsParam string `json:"clientsParam,omitempty"`
	// CLI is the subcommand: execute-test (OSB 1.x) or run (2.x).
	// +kubebuilder:validation:Enum=execute-test;run
	// +kubebuilder:default=execute-test
	// +optional
	CLI string `json:"cli,omitempty"`
	// ResultsFormat of the results file.
	// +kubebuilder:validation:Enum=markdown;csv
	// +kubebuilder:default=markdown
	// +optional
	ResultsFormat string `json:"resultsFormat,omitempty"`
	// CorpusClaim is a PersistentVolumeClaim holding OSB's benchmark data
	// (~/.benchmark/benchmarks: data and workloads), used offline; without
	// it OSB downloads the corpus.
	// +optional
	CorpusClaim string `json:"corpusClaim,omitempty"`
}
