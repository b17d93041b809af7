package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// Topology of replicated and sharded targets: who is the primary, where
// the replicas run, how they replicate, and the volumes besides the data.
// Every instance the run starts is recorded in status.environment.instances
// with its role, node, pool and zone (docs/targets.md).

// ReplicationMode is how a primary waits for its replicas.
// +kubebuilder:validation:Enum=Asynchronous;Synchronous
type ReplicationMode string

const (
	// ReplicationAsynchronous: a commit returns when the primary has it;
	// replicas follow.
	ReplicationAsynchronous ReplicationMode = "Asynchronous"
	// ReplicationSynchronous: a commit returns when the primary and
	// synchronousReplicas replicas have it.
	ReplicationSynchronous ReplicationMode = "Synchronous"
)

// PostgresReplication is how a CloudNativePG cluster's standbys replicate.
type PostgresReplication struct {
	// Mode of streaming replication to the standbys.
	// +kubebuilder:default=Asynchronous
	// +optional
	Mode ReplicationMode `json:"mode,omitempty"`
	// SynchronousReplicas is how many standbys confirm each commit with
	// mode Synchronous (CloudNativePG's postgresql.synchronous.number,
	// method any); it must be below the cluster's instances.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=8
	// +kubebuilder:default=1
	// +optional
	SynchronousReplicas int32 `json:"synchronousReplicas,omitempty"`
}

// PostgresTablespace is a tablespace on a volume of its own (CloudNativePG
// declarative tablespaces).
type PostgresTablespace struct {
	// Name of the tablespace in PostgreSQL.
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('pg_')",message="names beginning with pg_ are reserved by PostgreSQL"
	Name string `json:"name"`
	// Storage of the tablespace's volume, on each instance.
	Storage StorageSpec `json:"storage"`
	// Temporary makes it one of temp_tablespaces: sorts, hashes and
	// temporary tables spill there instead of the data volume.
	// +optional
	Temporary bool `json:"temporary,omitempty"`
}

// ValkeyCluster shards the keys over several Valkey primaries (Valkey
// Cluster, 16384 slots), each with its replicas.
// +kubebuilder:validation:XValidation:rule="(self.shards * (1 + (has(self.replicasPerShard) ? self.replicasPerShard : 0))) % (has(self.instancesPerNode) ? self.instancesPerNode : 1) == 0",message="instancesPerNode must divide shards × (1 + replicasPerShard): every node holds the same number of instances"
type ValkeyCluster struct {
	// Shards is the number of primaries the slots are spread over.
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=256
	Shards int32 `json:"shards"`
	// ReplicasPerShard is the number of replicas of each primary.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4
	// +optional
	ReplicasPerShard int32 `json:"replicasPerShard,omitempty"`
	// InstancesPerNode is how many Valkey servers share one node: one pod
	// per node runs that many servers, one container each, on ports 6379
	// and up. With whole-CPU requests equal to limits (resources) and
	// the kubelet's static CPU manager, each server has cores of its own.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +kubebuilder:default=1
	// +optional
	InstancesPerNode int32 `json:"instancesPerNode,omitempty"`
}

// TLSVersion is a TLS protocol version, spelled as MySQL spells it.
// +kubebuilder:validation:Enum=TLSv1.2;TLSv1.3
type TLSVersion string

const (
	TLSv12 TLSVersion = "TLSv1.2"
	TLSv13 TLSVersion = "TLSv1.3"
)

// SessionValue is the value of a session variable (ON, 1,
// READ-COMMITTED): letters, digits and _.,- only, so that it can never be
// read as SQL.
// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.,-]{1,128}$`
// +kubebuilder:validation:MaxLength=128
type SessionValue string

// InstanceRole is the part an instance plays in its target.
type InstanceRole string

const (
	InstancePrimary InstanceRole = "primary"
	InstanceReplica InstanceRole = "replica"
	// InstanceShard is a Valkey Cluster member (primaries and replicas of
	// the shards change at failover; the cluster says which is which).
	InstanceShard InstanceRole = "shard"
	// InstanceKeeper is a coordination server (ClickHouse Keeper).
	InstanceKeeper InstanceRole = "keeper"
	// InstanceServer is the one server of an unreplicated target, or a
	// node of a cluster without a primary (OpenSearch).
	InstanceServer InstanceRole = "server"
	// InstanceLoadGenerator is a load-generator pod.
	InstanceLoadGenerator InstanceRole = "loadgen"
)

// InstanceInfo is one pod of the run's target or load generators.
type InstanceInfo struct {
	// Name of the pod.
	Name string `json:"name"`
	// Role of the pod.
	Role InstanceRole `json:"role"`
	// Node the pod ran on.
	// +optional
	Node string `json:"node,omitempty"`
	// +optional
	Pool string `json:"pool,omitempty"`
	// +optional
	Zone string `json:"zone,omitempty"`
}

// VolumeInfo is one volume of the target besides the pods' ephemeral storage.
type VolumeInfo struct {
	// Purpose: data, wal, or tablespace/<name>.
	Purpose string `json:"purpose"`
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
	// Temporary: the tablespace is one of temp_tablespaces.
	// +optional
	Temporary bool `json:"temporary,omitempty"`
}

// ZoneLabel is the node label that names a node's zone.
const ZoneLabel = "topology.kubernetes.io/zone"

// Selector is the placement's nodeSelector with its zone: what a pod's
// nodeSelector must be.
func (p Placement) Selector() map[string]string {
	if p.Zone == "" {
		return p.NodeSelector
	}
	out := make(map[string]string, len(p.NodeSelector)+1)
	for k, v := range p.NodeSelector {
		out[k] = v
	}
	out[ZoneLabel] = p.Zone
	return out
}

// ReplicasPlacement is where a replicated target's replicas run:
// replicaPlacement, else placement.
func (t *TargetSpec) ReplicasPlacement() Placement {
	if t.ReplicaPlacement != nil {
		return *t.ReplicaPlacement
	}
	return t.Placement
}
