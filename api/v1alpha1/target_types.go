package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TargetSpec is the database under test: exactly one kind, plus where it runs.
// +kubebuilder:validation:XValidation:rule="[has(self.postgres), has(self.valkey), has(self.mysql), has(self.mongodb), has(self.opensearch), has(self.external)].filter(x, x).size() == 1",message="exactly one of postgres, valkey, mysql, mongodb, opensearch or external must be set"
type TargetSpec struct {
	// Postgres provisions a CloudNativePG Cluster owned by the run.
	// +optional
	Postgres *PostgresTarget `json:"postgres,omitempty"`

	// Valkey provisions a Valkey (Redis-compatible) StatefulSet and Service
	// owned by the run.
	// +optional
	Valkey *ValkeyTarget `json:"valkey,omitempty"`

	// MySQL provisions a MySQL server (StatefulSet and Service) owned by the run.
	// +optional
	MySQL *MySQLTarget `json:"mysql,omitempty"`

	// MongoDB provisions a MongoDB-wire document store owned by the run.
	// +optional
	MongoDB *MongoDBTarget `json:"mongodb,omitempty"`

	// OpenSearch provisions an OpenSearch cluster of one or more nodes
	// owned by the run.
	// +optional
	OpenSearch *OpenSearchTarget `json:"opensearch,omitempty"`

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

// ValkeyTarget is a Valkey server created for the run (default image
// valkey/valkey:8.1; args such as ["--io-threads", "4"]).
type ValkeyTarget struct {
	ServerTarget `json:",inline"`
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
	// ClientCertSecretRef names a Secret with the keys `tls.crt` and
	// `tls.key`: the client certificate of two-way (mutual) TLS.
	// +optional
	ClientCertSecretRef *corev1.LocalObjectReference `json:"clientCertSecretRef,omitempty"`
}

// ServerTarget are the settings every operator-owned server shares.
type ServerTarget struct {
	// Image of the server; empty uses the kind's default.
	// +optional
	Image string `json:"image,omitempty"`

	// Args are extra server arguments.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Args []string `json:"args,omitempty"`

	// Storage for the data directory; without it the data lives in an emptyDir.
	// +optional
	Storage *StorageSpec `json:"storage,omitempty"`

	// Resources of the server container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// MySQLTarget is a MySQL server created for the run. The operator
// generates the root password in the Secret `<run>-mysql-credentials`.
type MySQLTarget struct {
	ServerTarget `json:",inline"`

	// Database created at start (MYSQL_DATABASE).
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]{0,63}$`
	// +kubebuilder:default=bench
	// +optional
	Database string `json:"database,omitempty"`

	// TLS serves connections over TLS and makes the load tool use it.
	// +optional
	TLS *ServerTLS `json:"tls,omitempty"`
}

// ServerTLS is TLS on an operator-owned server.
type ServerTLS struct {
	// Enabled turns TLS on.
	Enabled bool `json:"enabled"`
	// CertificateSecretRef names a Secret with `tls.crt`, `tls.key` and
	// `ca.crt` for the server. Without it the operator generates a CA and a
	// server certificate for the Service's names in `<run>-<kind>-tls`.
	// +optional
	CertificateSecretRef *corev1.LocalObjectReference `json:"certificateSecretRef,omitempty"`
	// RequireClientCertificates makes the server accept only clients with a
	// certificate signed by the CA (two-way TLS); the operator then issues
	// one for the load generators.
	// +optional
	RequireClientCertificates bool `json:"requireClientCertificates,omitempty"`
}

// MongoDBTarget is a MongoDB-wire document store created for the run (for
// YCSB). The operator generates the root credentials in the Secret
// `<run>-mongodb-credentials`.
type MongoDBTarget struct {
	ServerTarget `json:",inline"`

	// Database the load tool uses.
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`
	// +kubebuilder:default=ycsb
	// +optional
	Database string `json:"database,omitempty"`
}

// OpenSearchTarget is an OpenSearch cluster created for the run.
type OpenSearchTarget struct {
	ServerTarget `json:",inline"`

	// Nodes of the cluster; each is cluster-manager eligible and holds data.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=15
	// +kubebuilder:default=1
	// +optional
	Nodes int32 `json:"nodes,omitempty"`

	// Security turns the security plugin on: HTTPS with the image's demo
	// certificates and the admin user, whose password the operator
	// generates in `<run>-opensearch-credentials`. Off: plain HTTP, no users.
	// +optional
	Security bool `json:"security,omitempty"`

	// HeapSize of each node's JVM (-Xms and -Xmx), such as 2g.
	// +kubebuilder:validation:Pattern=`^[0-9]+[mg]$`
	// +kubebuilder:default="1g"
	// +optional
	HeapSize string `json:"heapSize,omitempty"`
}
