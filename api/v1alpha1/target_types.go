package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TargetSpec is the database under test: exactly one kind, plus where it runs.
// +kubebuilder:validation:XValidation:rule="[has(self.postgres), has(self.valkey), has(self.external)].filter(x, x).size() == 1",message="exactly one of postgres, valkey or external must be set"
type TargetSpec struct {
	// Postgres provisions a CloudNativePG Cluster owned by the run.
	// +optional
	Postgres *PostgresTarget `json:"postgres,omitempty"`

	// Valkey provisions a Valkey (Redis-compatible) StatefulSet and Service
	// owned by the run.
	// +optional
	Valkey *ValkeyTarget `json:"valkey,omitempty"`

	// External points at an existing endpoint, such as a managed service.
	// +optional
	External *ExternalTarget `json:"external,omitempty"`

	// Placement is where the target's pods run: the platform under test.
	// Ignored for external targets.
	// +optional
	Placement Placement `json:"placement,omitempty"`
}

// Placement says which nodes a set of pods may use.
type Placement struct {
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
}

// StorageSpec is the persistent storage of a provisioned target.
type StorageSpec struct {
	// Size of each instance's volume.
	// +kubebuilder:default="10Gi"
	// +optional
	Size resource.Quantity `json:"size,omitempty"`
	// StorageClassName; empty uses the cluster default.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// PostgresTarget is a CloudNativePG cluster created for the run.
type PostgresTarget struct {
	// Instances in the cluster (one primary plus replicas).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	// +kubebuilder:default=1
	// +optional
	Instances int32 `json:"instances,omitempty"`

	// ImageName is the PostgreSQL operand image; empty uses CloudNativePG's default.
	// +optional
	ImageName string `json:"imageName,omitempty"`

	// Parameters are postgresql.conf settings passed to CloudNativePG.
	// +optional
	Parameters map[string]string `json:"parameters,omitempty"`

	// Storage of each instance.
	// +optional
	Storage StorageSpec `json:"storage,omitempty"`

	// Resources of each PostgreSQL instance.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// ValkeyTarget is a Valkey server created for the run.
type ValkeyTarget struct {
	// Image of the server.
	// +kubebuilder:default="valkey/valkey:8.1"
	// +optional
	Image string `json:"image,omitempty"`

	// Args are extra server arguments, such as ["--io-threads", "4"].
	// +optional
	Args []string `json:"args,omitempty"`

	// Storage for the data directory; without it the data lives in an emptyDir.
	// +optional
	Storage *StorageSpec `json:"storage,omitempty"`

	// Resources of the server container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// ExternalTarget is an existing endpoint the run does not own.
type ExternalTarget struct {
	// Host name or address of the endpoint.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Host string `json:"host"`

	// Port of the endpoint.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`

	// Database name, for SQL targets.
	// +optional
	Database string `json:"database,omitempty"`

	// SecretRef names a Secret in the run's namespace with the keys
	// `username` and `password` (either may be absent). Its values reach the
	// tool only through environment variables and are never recorded.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`

	// TLS settings for connecting to the endpoint.
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`
}

// TLSSpec is how the load tool connects over TLS.
type TLSSpec struct {
	// Enabled turns TLS on.
	Enabled bool `json:"enabled"`
	// CASecretRef names a Secret whose key `ca.crt` holds the CA bundle that
	// verifies the server. Without it the server certificate is not verified.
	// +optional
	CASecretRef *corev1.LocalObjectReference `json:"caSecretRef,omitempty"`
	// ServerName overrides the name checked against the server certificate (SNI).
	// +optional
	ServerName string `json:"serverName,omitempty"`
}
