package v1alpha1

// ClickHouseTarget is a ClickHouse server created for the run from the
// official image: one shard of one replica, or of several replicas that
// replicate through ClickHouse Keeper (keeper.replicas servers). The
// operator generates the password of the user `dbperf` in the Secret
// `<run>-clickhouse-credentials`; clients use the HTTP interface (8123).
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas <= 1 || has(self.keeper)",fieldPath=".keeper",message="keeper is required with replicas above 1: the replicas replicate through ClickHouse Keeper"
type ClickHouseTarget struct {
	ServerTarget `json:",inline"`

	// Database created at start.
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]{0,63}$`
	// +kubebuilder:default=bench
	// +optional
	Database string `json:"database,omitempty"`

	// Replicas of the one shard. Above 1 they replicate through Keeper,
	// which is then required, and tables are created ON CLUSTER with
	// Replicated engines by the workload's prepare step.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	// +kubebuilder:default=1
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Keeper runs ClickHouse Keeper servers for replication and
	// distributed DDL.
	// +optional
	Keeper *ClickHouseKeeper `json:"keeper,omitempty"`
}

// ClickHouseKeeper is the ensemble that coordinates a ClickHouse shard's replicas.
type ClickHouseKeeper struct {
	// Replicas of Keeper: 1, or 3 or 5 for a quorum that survives failures.
	// +kubebuilder:validation:Enum=1;3;5
	// +kubebuilder:default=3
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Image of Keeper; empty uses the kind's default.
	// +optional
	Image string `json:"image,omitempty"`
}
