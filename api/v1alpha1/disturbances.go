package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DisturbancesSpec makes something happen to the target while a
// measurement runs — a background SQL load, a noisy neighbour on its node,
// a lost member, a degraded network — and measures how it takes it: each
// disturbed measurement gets a card per disturbance (time to detect,
// unavailability, dip depth, time to recover, operations lost, errors,
// for a lost member the time to a new primary and whether every
// acknowledged write survived), whose figures are metrics of the
// measurement (source "disturbance", operation the disturbance's name),
// so that a run's summary and a comparison give them medians and
// intervals over the repetitions like any metric.
//
// A disturbed measurement's windows are labelled: before (the steady
// state: from the warm-up to the first disturbance), during and after. The
// stability checks and the error limit judge the steady window only; a
// lost member fails a measurement only when the tool itself gave up (its
// card says so). docs/disturbances.md describes each kind, what it needs
// and what its card means.
// +kubebuilder:validation:XValidation:rule="self.schedule.all(d, !has(d.memberLoss) || !has(d.memberLoss.action) || d.memberLoss.action != 'DrainNode') || (has(self.allowNodeDrain) && self.allowNodeDrain)",message="a memberLoss with action DrainNode cordons and drains a node: set disturbances.allowNodeDrain: true to allow it"
type DisturbancesSpec struct {
	// Schedule lists the disturbances, each acting on the measurements of
	// the repetitions it names (every repetition when it names none).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	Schedule []Disturbance `json:"schedule"`

	// Seed makes the random phases (between) reproducible: the same seed
	// gives every repetition the same offsets. When unset the operator
	// picks one and records it in status.disturbanceSeed.
	// +optional
	Seed *int64 `json:"seed,omitempty"`

	// AllowNodeDrain allows memberLoss action DrainNode, which cordons the
	// node of the member and evicts its pods; it is refused on a node that
	// carries pods of another run, and the node is uncordoned afterwards.
	// +optional
	AllowNodeDrain bool `json:"allowNodeDrain,omitempty"`
}

// Disturbance is one thing that happens to the target during a
// measurement, at an offset into it (from the instant the tool started).
// +kubebuilder:validation:XValidation:rule="[has(self.sqlLoad), has(self.noisyNeighbour), has(self.memberLoss), has(self.network)].filter(x, x).size() == 1",message="give exactly one kind of disturbance: sqlLoad, noisyNeighbour, memberLoss or network"
// +kubebuilder:validation:XValidation:rule="has(self.at) != has(self.between)",message="give either at (a fixed offset into the measurement) or between (a random offset in a range), not both"
// +kubebuilder:validation:XValidation:rule="has(self.memberLoss) ? !has(self.duration) : has(self.duration)",message="duration is how long a sqlLoad, noisyNeighbour or network disturbance acts; a memberLoss happens at one instant and takes none"
type Disturbance struct {
	// Name names the disturbance in its card, its metrics (their
	// operation) and its events.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// At is the offset into the measurement, from the instant the tool
	// started, at which the disturbance is requested. It must leave a
	// steady window before it (after workload.warmup).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be between 1s and 24h"
	// +optional
	At *metav1.Duration `json:"at,omitempty"`

	// Between draws the offset at random (uniformly, to the millisecond)
	// in a range, from disturbances.seed and the repetition, so that the
	// disturbance meets the workload in different phases and a run with
	// the same seed replays them; each measurement records its offset.
	// +optional
	Between *OffsetRange `json:"between,omitempty"`

	// Duration is how long a sqlLoad, noisyNeighbour or network
	// disturbance acts.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be between 1s and 24h"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`

	// Repetitions are the repetitions whose measurements it disturbs
	// (counting from 1); every repetition when empty. The repeats of a
	// disturbance are what its card's intervals are computed over.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=100
	// +listType=set
	// +optional
	Repetitions []int32 `json:"repetitions,omitempty"`

	// SQLLoad runs statements in parallel sessions on the target.
	// +optional
	SQLLoad *SQLLoadDisturbance `json:"sqlLoad,omitempty"`

	// NoisyNeighbour runs a stress pod on the node of the target's primary.
	// +optional
	NoisyNeighbour *NoisyNeighbourDisturbance `json:"noisyNeighbour,omitempty"`

	// MemberLoss takes a member of the target away: its pod deleted, a
	// switchover, or its node drained.
	// +optional
	MemberLoss *MemberLossDisturbance `json:"memberLoss,omitempty"`

	// Network degrades the target's network or disk through Chaos Mesh,
	// where the cluster has it.
	// +optional
	Network *NetworkDisturbance `json:"network,omitempty"`
}

// OffsetRange is a range of offsets into a measurement.
// +kubebuilder:validation:XValidation:rule="duration(self.from) < duration(self.to)",message="from must be before to"
type OffsetRange struct {
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be between 1s and 24h"
	From metav1.Duration `json:"from"`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be between 1s and 24h"
	To metav1.Duration `json:"to"`
}

// DisturbanceCredentials are whose account a SQL load uses.
// +kubebuilder:validation:Enum=Administrator;Workload
type DisturbanceCredentials string

const (
	// CredentialsAdministrator: the target's administrator (CloudNativePG's
	// superuser Secret, the server's root account; for an external target
	// sqlLoad.secretRef).
	CredentialsAdministrator DisturbanceCredentials = "Administrator"
	// CredentialsWorkload: the load tool's own account.
	CredentialsWorkload DisturbanceCredentials = "Workload"
)

// SQLLoadDisturbance is background work on the database: a heavy query, a
// big temporary table, a long transaction holding locks. The runner of the
// first load generator opens the sessions at the offset (each its own
// connection, application_name dbperf-disturb/<name> on PostgreSQL), runs
// the statements in each until duration has passed, then cancels what is
// in flight; its card counts the statements completed, cancelled and
// failed (by the database's error code).
// +kubebuilder:validation:XValidation:rule="!has(self.secretRef) || !has(self.credentials) || self.credentials == 'Administrator'",message="secretRef names the administrator's account: it goes with credentials Administrator"
type SQLLoadDisturbance struct {
	// Sessions is the number of parallel sessions.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	Sessions int32 `json:"sessions"`

	// Statements are run in order by each session, again and again until
	// the duration has passed (once when once is set). On Valkey/Redis a
	// statement is a command line, split into words as valkey-cli does
	// (DEBUG SLEEP 0.5; EVAL "return redis.call('PING')" 0: double quotes
	// with \" \n \xHH escapes, single quotes literal).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=16384
	Statements []string `json:"statements"`

	// Once runs the statements once per session instead of repeating them;
	// the load still ends (cancelled) when the duration has passed.
	// +optional
	Once bool `json:"once,omitempty"`

	// Credentials are whose account the sessions use; Administrator by
	// default. Their values reach the runner from their Secret and are
	// never printed.
	// +kubebuilder:default=Administrator
	// +optional
	Credentials DisturbanceCredentials `json:"credentials,omitempty"`

	// SecretRef names a Secret with the administrator's username and
	// password (keys username, password): required for Administrator
	// credentials on an external target; on a target the run provisions it
	// replaces the one the target has.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
}

// NoisyNeighbourDisturbance is a stress pod placed by node name on the node
// of the target's primary (its one server, or the pod memberLoss would
// take), running dbperf-runner's stress workers for the duration and
// removed after; its own CPU and memory are recorded beside the target's.
// +kubebuilder:validation:XValidation:rule="(has(self.cpuWorkers) ? self.cpuWorkers : 0) + (has(self.memoryBytes) ? 1 : 0) + (has(self.diskWorkers) ? self.diskWorkers : 0) > 0",message="give cpuWorkers, memoryBytes or diskWorkers: a neighbour that does nothing is not noisy"
type NoisyNeighbourDisturbance struct {
	// CPUWorkers spin on a core each.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=256
	// +optional
	CPUWorkers int32 `json:"cpuWorkers,omitempty"`

	// MemoryBytes is allocated and kept touched (the page cache and memory
	// bandwidth the target loses).
	// +kubebuilder:validation:Minimum=1048576
	// +kubebuilder:validation:Maximum=1099511627776
	// +optional
	MemoryBytes *int64 `json:"memoryBytes,omitempty"`

	// DiskWorkers each write and fsync a file in the pod's scratch volume.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=64
	// +optional
	DiskWorkers int32 `json:"diskWorkers,omitempty"`

	// Resources of the stress pod; none by default (it competes as a
	// best-effort pod would).
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// MemberRole is which member a memberLoss takes away.
// +kubebuilder:validation:Enum=Primary;Replica;ShardPrimary
type MemberRole string

const (
	// MemberPrimary is the target's primary (CloudNativePG's
	// status.currentPrimary; a replicated server's primary).
	MemberPrimary MemberRole = "Primary"
	// MemberReplica is one of its replicas (standbys).
	MemberReplica MemberRole = "Replica"
	// MemberShardPrimary is the primary of one shard of a Valkey Cluster.
	MemberShardPrimary MemberRole = "ShardPrimary"
)

// MemberLossAction is how a member is taken away.
// +kubebuilder:validation:Enum=DeletePod;Switchover;DrainNode
type MemberLossAction string

const (
	// ActionDeletePod deletes the member's pod (with standbys, a failover).
	ActionDeletePod MemberLossAction = "DeletePod"
	// ActionSwitchover asks CloudNativePG to promote a standby (what
	// `kubectl cnpg promote` does): a planned change of primary.
	ActionSwitchover MemberLossAction = "Switchover"
	// ActionDrainNode cordons the member's node and evicts its pods; the
	// node is uncordoned when the measurement ends. Needs
	// disturbances.allowNodeDrain.
	ActionDrainNode MemberLossAction = "DrainNode"
)

// MemberLossDisturbance takes a member of a replicated target away. The
// moment it took effect is when the pod was gone (or the node cordoned),
// and for a primary the card gives the time to a new primary (from the
// target's own status) and to full redundancy, and the write ledger's
// check.
// +kubebuilder:validation:XValidation:rule="!has(self.action) || self.action != 'Switchover' || !has(self.member) || self.member == 'Primary'",message="a switchover replaces the primary: member must be Primary"
type MemberLossDisturbance struct {
	// Member is which member is taken away; Primary by default.
	// +kubebuilder:default=Primary
	// +optional
	Member MemberRole `json:"member,omitempty"`

	// Action is how; DeletePod by default.
	// +kubebuilder:default=DeletePod
	// +optional
	Action MemberLossAction `json:"action,omitempty"`

	// GracePeriod is the deleted pod's termination grace period; zero (a
	// crash) by default.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('10m')",message="must be between 0s and 10m"
	// +optional
	GracePeriod *metav1.Duration `json:"gracePeriod,omitempty"`

	// WriteLedger writes numbered rows (keys) of its own through the
	// target's endpoint from 5 s before the loss to the end of the
	// measurement, and reads them back after it: an acknowledged write that
	// is missing is a lost write. On by default.
	// +kubebuilder:default=true
	// +optional
	WriteLedger *bool `json:"writeLedger,omitempty"`
}

// NetworkChaosAction is what a network disturbance does.
// +kubebuilder:validation:Enum=Delay;Loss;IODelay
type NetworkChaosAction string

const (
	// NetworkDelay delays the target's packets (Chaos Mesh NetworkChaos
	// action delay).
	NetworkDelay NetworkChaosAction = "Delay"
	// NetworkLoss drops a share of them (NetworkChaos action loss).
	NetworkLoss NetworkChaosAction = "Loss"
	// NetworkIODelay delays the target's disk operations (Chaos Mesh
	// IOChaos action latency on its data volume).
	NetworkIODelay NetworkChaosAction = "IODelay"
)

// NetworkDisturbance creates a Chaos Mesh NetworkChaos (or IOChaos) on the
// target's pods for the window and removes it after. Chaos Mesh is an
// optional integration: when its CRDs are not installed the run says so
// and fails before measuring.
// +kubebuilder:validation:XValidation:rule="self.action == 'Loss' ? has(self.lossPercent) : has(self.latency)",message="action Loss needs lossPercent; Delay and IODelay need latency"
type NetworkDisturbance struct {
	Action NetworkChaosAction `json:"action"`

	// Latency added to each packet (Delay) or disk operation (IODelay).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1us') && duration(self) <= duration('1m')",message="must be between 1us and 1m"
	// +optional
	Latency *metav1.Duration `json:"latency,omitempty"`

	// Jitter around the latency.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('1m')",message="must be between 0s and 1m"
	// +optional
	Jitter *metav1.Duration `json:"jitter,omitempty"`

	// LossPercent of packets dropped (Loss).
	// +optional
	LossPercent *Percent `json:"lossPercent,omitempty"`
}
