package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TargetSpec is the database under test: exactly one kind, plus where it runs.
// +kubebuilder:validation:XValidation:rule="[has(self.postgres), has(self.valkey), has(self.mysql), has(self.mongodb), has(self.opensearch), has(self.clickhouse), has(self.external)].filter(x, x).size() == 1",message="exactly one of postgres, valkey, mysql, mongodb, opensearch, clickhouse or external must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.replicaPlacement) || (has(self.postgres) && has(self.postgres.instances) && self.postgres.instances > 1) || (has(self.mysql) && has(self.mysql.replicas) && self.mysql.replicas > 0) || (has(self.valkey) && has(self.valkey.replicas) && self.valkey.replicas > 0) || (has(self.clickhouse) && has(self.clickhouse.replicas) && self.clickhouse.replicas > 1)",fieldPath=".replicaPlacement",message="replicaPlacement needs replicas: postgres.instances above 1, mysql.replicas or valkey.replicas above 0, or clickhouse.replicas above 1"
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

	// ClickHouse provisions a ClickHouse shard (and its Keeper servers)
	// owned by the run.
	// +optional
	ClickHouse *ClickHouseTarget `json:"clickhouse,omitempty"`

	// External points at an existing endpoint, such as a managed service.
	// +optional
	External *ExternalTarget `json:"external,omitempty"`

	// Placement is where the target's pods run: the platform under test.
	// For a replicated target it places the primary (and the replicas,
	// unless replicaPlacement is set). Ignored for external targets.
	// +optional
	Placement Placement `json:"placement,omitempty"`

	// ReplicaPlacement is where the replicas of a replicated target run
	// (CloudNativePG standbys, MySQL and Valkey replicas, ClickHouse
	// replicas), such as another zone than the primary's. Unset: placement.
	// +optional
	ReplicaPlacement *Placement `json:"replicaPlacement,omitempty"`
}

// Placement says which nodes a set of pods may use. The weights of
// preferred affinity terms are checked at admission (1–100, as the
// scheduler requires): the embedded Kubernetes type says int32 but the API
// server would store any integer, and a stored 2147483648 makes every list
// of the resource fail to decode.
// +kubebuilder:validation:XValidation:rule="!has(self.affinity) || !has(self.affinity.nodeAffinity) || !has(self.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution) || self.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.all(p, p.weight >= 1 && p.weight <= 100)",fieldPath=".affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",message="each preferred term's weight is 1 to 100"
// +kubebuilder:validation:XValidation:rule="!has(self.affinity) || !has(self.affinity.podAffinity) || !has(self.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution) || self.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution.all(p, p.weight >= 1 && p.weight <= 100)",fieldPath=".affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution",message="each preferred term's weight is 1 to 100"
// +kubebuilder:validation:XValidation:rule="!has(self.affinity) || !has(self.affinity.podAntiAffinity) || !has(self.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution) || self.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.all(p, p.weight >= 1 && p.weight <= 100)",fieldPath=".affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution",message="each preferred term's weight is 1 to 100"
type Placement struct {
	// Zone the pods must run in: the node label
	// topology.kubernetes.io/zone, added to nodeSelector.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	// +optional
	Zone string `json:"zone,omitempty"`
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
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// PostgresTarget is a CloudNativePG cluster created for the run.
// +kubebuilder:validation:XValidation:rule="!has(self.replication) || !has(self.replication.mode) || self.replication.mode != 'Synchronous' || (has(self.instances) && self.replication.synchronousReplicas < self.instances)",fieldPath=".replication.synchronousReplicas",message="synchronous replication needs more instances than synchronousReplicas: a primary plus that many standbys"
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

	// Replication of the standbys (instances above 1): asynchronous by
	// default, or synchronous with a number of confirming standbys.
	// +optional
	Replication *PostgresReplication `json:"replication,omitempty"`

	// WALStorage puts pg_wal on a volume of its own (CloudNativePG's
	// walStorage), on each instance. Unset: the WAL shares the data volume.
	// +optional
	WALStorage *StorageSpec `json:"walStorage,omitempty"`

	// Tablespaces on volumes of their own; a temporary one receives
	// temporary tables and spills (temp_tablespaces).
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Tablespaces []PostgresTablespace `json:"tablespaces,omitempty"`
}

// ValkeyTarget is a Valkey server created for the run (default image
// valkey/valkey:8.1; args such as ["--io-threads", "4"]): one server,
// a primary with replicas, or a sharded cluster.
// +kubebuilder:validation:XValidation:rule="!(has(self.cluster) && has(self.replicas) && self.replicas > 0)",message="replicas is for one primary; a cluster's replicas are cluster.replicasPerShard"
type ValkeyTarget struct {
	ServerTarget `json:",inline"`

	// Replicas of the one primary (replicaof), each in its own pod on
	// replicaPlacement. Zero: no replication. Load tools write to the
	// primary; the replicas' Service is recorded in status.target.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=8
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Cluster shards the keys over several primaries (Valkey Cluster);
	// load tools connect in cluster mode (memtier --cluster-mode).
	// +optional
	Cluster *ValkeyCluster `json:"cluster,omitempty"`
}

// ExternalTarget is an existing endpoint the run does not own.
type ExternalTarget struct {
	// Host name or address of the endpoint: a DNS name (RFC 1123
	// subdomain, any case), an IPv4 or an IPv6 address (without brackets).
	// It reaches the tools as an argument, never through a shell; the rule
	// refuses anything else (spaces, ';', a URL) at admission all the same.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?([.][A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*|[0-9A-Fa-f]{0,4}(:[0-9A-Fa-f]{0,4}){2,7}(:[0-9]{1,3}([.][0-9]{1,3}){3})?)$')",message="must be a DNS name (RFC 1123: letters, digits, '-' and '.'), an IPv4 or an IPv6 address"
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
	// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="must name the Secret"
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`

	// TLS settings for connecting to the endpoint.
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`

	// SessionVariables the endpoint's sessions must have (MySQL protocol),
	// such as autocommit: ON. They are not set: each measurement checks
	// them on a session of the workload's user, and a difference makes it
	// Invalid with both values.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-z_][a-z0-9_]{0,63}$'))",message="variable names are lower-case letters, digits and underscores"
	// +optional
	SessionVariables map[string]SessionValue `json:"sessionVariables,omitempty"`
}

// TLSSpec is how the load tool connects over TLS.
type TLSSpec struct {
	// Enabled turns TLS on.
	Enabled bool `json:"enabled"`
	// CASecretRef names a Secret whose key `ca.crt` holds the CA bundle that
	// verifies the server. Without it the server certificate is not verified.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="must name the Secret"
	CASecretRef *corev1.LocalObjectReference `json:"caSecretRef,omitempty"`
	// ServerName overrides the name checked against the server certificate (SNI).
	// +optional
	ServerName string `json:"serverName,omitempty"`
	// ClientCertSecretRef names a Secret with the keys `tls.crt` and
	// `tls.key`: the client certificate of two-way (mutual) TLS.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="must name the Secret"
	ClientCertSecretRef *corev1.LocalObjectReference `json:"clientCertSecretRef,omitempty"`
	// Version the client asks for (MySQL protocol: --tls-version); each
	// measurement checks the version negotiated.
	// +optional
	Version TLSVersion `json:"version,omitempty"`
	// Cipher the client asks for, by its IANA (TLS_AES_128_GCM_SHA256)
	// or OpenSSL name (ECDHE-RSA-AES128-GCM-SHA256). Each measurement
	// checks the cipher a session of the workload's user negotiated, and
	// a different one makes it Invalid with both names.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]{1,64}$`
	// +optional
	Cipher string `json:"cipher,omitempty"`
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

	// Replicas of the primary (GTID-based asynchronous replication), each
	// in its own pod on replicaPlacement. Zero: no replication.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=8
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// SessionVariables are set as the server's defaults (such as
	// autocommit: ON) and checked on a session of the workload's user at
	// each measurement; a difference makes it Invalid with both values.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-z_][a-z0-9_]{0,63}$'))",message="variable names are lower-case letters, digits and underscores"
	// +optional
	SessionVariables map[string]SessionValue `json:"sessionVariables,omitempty"`
}

// ServerTLS is TLS on an operator-owned server.
// +kubebuilder:validation:XValidation:rule="!(has(self.certificateSecretRef) && has(self.requireClientCertificates) && self.requireClientCertificates)",fieldPath=".requireClientCertificates",message="requireClientCertificates needs an operator-generated certificate: the operator signs the load generators' client certificate with its own CA, and never has the key of a certificate you bring (leave certificateSecretRef empty)"
type ServerTLS struct {
	// Enabled turns TLS on.
	Enabled bool `json:"enabled"`
	// CertificateSecretRef names a Secret with `tls.crt`, `tls.key` and
	// `ca.crt` for the server. Without it the operator generates a CA and a
	// server certificate for the Service's names in `<run>-<kind>-tls`.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="must name the Secret"
	CertificateSecretRef *corev1.LocalObjectReference `json:"certificateSecretRef,omitempty"`
	// RequireClientCertificates makes the server accept only clients with a
	// certificate signed by the CA (two-way TLS); the operator then issues
	// one for the load generators.
	// +optional
	RequireClientCertificates bool `json:"requireClientCertificates,omitempty"`
	// Version is the only TLS version the server accepts; each
	// measurement checks the version negotiated.
	// +optional
	Version TLSVersion `json:"version,omitempty"`
	// Cipher is the only cipher the server offers and the client asks
	// for (IANA name for TLS 1.3, such as TLS_AES_128_GCM_SHA256; OpenSSL
	// name for TLS 1.2). Each measurement checks the cipher a session of
	// the workload's user negotiated, and a different one makes it
	// Invalid with both names.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]{1,64}$`
	// +optional
	Cipher string `json:"cipher,omitempty"`
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
