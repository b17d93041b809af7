package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Phase is where a BenchmarkRun is in its life.
// +kubebuilder:validation:Enum=Pending;Queued;Provisioning;Preparing;Running;Collecting;Succeeded;Failed;Invalid
type Phase string

const (
	PhasePending      Phase = "Pending"
	PhaseQueued       Phase = "Queued"
	PhaseProvisioning Phase = "Provisioning"
	PhasePreparing    Phase = "Preparing"
	PhaseRunning      Phase = "Running"
	PhaseCollecting   Phase = "Collecting"
	PhaseSucceeded    Phase = "Succeeded"
	PhaseFailed       Phase = "Failed"
	PhaseInvalid      Phase = "Invalid"
)

// Terminal tells whether a run in this phase is finished.
func (p Phase) Terminal() bool {
	return p == PhaseSucceeded || p == PhaseFailed || p == PhaseInvalid
}

// BenchmarkRunStatus is what the operator observed and measured.
type BenchmarkRunStatus struct {
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions of the run (every one is Unknown, reason Pending, until
	// the operator has evaluated it):
	// Admitted: True once the run may use its nodes; False (WaitingForNodes,
	// phase Queued) while another run may use the same nodes.
	// TargetReady: True (Ready) when the database accepts connections; False
	// while it does not (Provisioning, CRDNotInstalled, SecretNotFound,
	// SwitchingOver, PlacementUnsatisfied, ClusterNotCreated).
	// Prepared: True when the prepare step finished (Prepared), the tool has
	// none (NotNeeded) or spec.workload.skipPrepare (Skipped); False while it
	// runs (Preparing) or after it failed (PrepareFailed).
	// Completed: True (AllMeasured) when every measurement finished and the
	// results are written; False while measuring (Measuring) or when the run
	// ended early (Timeout, PrepareFailed, InvalidSpec, ImageNotAllowed,
	// PodNotStarted, DeadlineExceeded). TargetReady, Prepared and Completed are False with
	// PodNotStarted while a pod of theirs cannot start.
	// Valid: True (AllValid) when every measurement passed the validity
	// checks; False with SomeFailed, SomeInvalid, Unstable, AwaitingResults,
	// InvalidSpec, ImageNotAllowed or ResultsLost, and the reasons in its
	// message.
	// Rejected (only once a person rejected measurements, annotation
	// bench.dbperf.io/rejections): True (RejectedByPerson) with what, who
	// and why; False when every rejection was undone (NotRejected) or the
	// annotation is not a list of rejections (Unreadable).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Message says in one line what the run waits for when something
	// keeps it from going on (a pod that cannot start, the nodes another run
	// holds: Queued), or why it failed or is not valid: the condition that says
	// so, its reason and message
	// (the tool's own error lines for a failed prepare step). Empty while
	// all goes well and on success. A printer column.
	// +optional
	Message string `json:"message,omitempty"`

	// Deadline is the deadline of what the run waits for now
	// (spec.deadlines): the phase, what for, when its clock started and
	// when it passes. Unset when the phase has none.
	// +optional
	Deadline *DeadlineStatus `json:"deadline,omitempty"`

	// StartTime is when the run started: when it was admitted to its nodes
	// (after any time Queued). spec.timeout counts from it.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Workload is the tool's name, for the printer column.
	// +optional
	Workload string `json:"workload,omitempty"`

	// Target is what the run measures.
	// +optional
	Target *TargetStatus `json:"target,omitempty"`

	// Progress counts finished measurements: "3/8".
	// +optional
	Progress string `json:"progress,omitempty"`

	// Measuring is the measurement in progress, from its Job's creation
	// until it is recorded: how long it has run is now − its startTime.
	// It lives in status, so a manager that restarts in the middle of a
	// long measurement (a 24-hour soak) carries on from it.
	// +optional
	Measuring *MeasurementProgress `json:"measuring,omitempty"`

	// Disturbing is what the disturbances of the measurement in progress
	// did, as the operator acts on them: requested, took effect, ended,
	// removed. It lives in status so that a restarted manager applies each
	// once and removes each once; it moves into the measurement's result
	// when it is recorded.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	Disturbing []DisturbanceStatus `json:"disturbing,omitempty"`

	// DisturbanceSeed is the seed of the disturbances' random phases:
	// spec.disturbances.seed, or the one the operator chose.
	// +optional
	DisturbanceSeed *int64 `json:"disturbanceSeed,omitempty"`

	// ExpectedCompletionTime is when the run should end: the mean duration
	// of its finished measurements times those still to come, from the
	// start of the one in progress; at most the run's timeout. Unset until
	// a measurement has finished.
	// +optional
	ExpectedCompletionTime *metav1.Time `json:"expectedCompletionTime,omitempty"`

	// Steps holds, per step of the sweep, every repetition and a summary.
	// +optional
	Steps []StepStatus `json:"steps,omitempty"`

	// Capacity is what a capacity run (spec.capacity) found: its levels,
	// the maximum and why it stopped.
	// +optional
	Capacity *CapacityStatus `json:"capacity,omitempty"`

	// Primary is the headline number.
	// +optional
	Primary *PrimaryMetric `json:"primary,omitempty"`

	// Environment is where the run ran.
	// +optional
	Environment *Environment `json:"environment,omitempty"`

	// ResultsConfigMap names the ConfigMap with the full results.
	// +optional
	ResultsConfigMap string `json:"resultsConfigMap,omitempty"`

	// CleanupCompleted is set once the cleanup policy has been carried out:
	// what it deletes is deleted, or it keeps everything (Never, or
	// OnSuccess on a run that did not succeed).
	// +optional
	CleanupCompleted bool `json:"cleanupCompleted,omitempty"`
}

// TargetStatus says what the run measured. It never holds credentials.
type TargetStatus struct {
	// Kind is postgres, valkey, mysql, mongodb, opensearch or external.
	Kind string `json:"kind"`
	// Resource is the object that serves the target, such as "Cluster/run-a-pg".
	// +optional
	Resource string `json:"resource,omitempty"`
	// +optional
	Host string `json:"host,omitempty"`
	// +optional
	Port int32 `json:"port,omitempty"`
}

// StepStatus is one value of the sweep.
type StepStatus struct {
	// Name is a stable label of the step, such as "clients=20".
	Name string `json:"name"`
	// Parameters are the swept values of this step.
	// +optional
	Parameters map[string]string `json:"parameters,omitempty"`
	// Repetitions measured so far.
	// +optional
	Repetitions []RepetitionStatus `json:"repetitions,omitempty"`
	// Summary over the valid repetitions, per metric.
	// +optional
	Summary []MetricSummary `json:"summary,omitempty"`
	// Unstable is set when the primary metric varied more between
	// repetitions than spec.validity allows.
	// +optional
	Unstable bool `json:"unstable,omitempty"`
}

// Verdict of one measurement.
// +kubebuilder:validation:Enum=Succeeded;Failed;Invalid
type Verdict string

const (
	// VerdictSucceeded: the tool finished and every validity check passed.
	VerdictSucceeded Verdict = "Succeeded"
	// VerdictFailed: the tool failed, crashed or printed no usable result.
	VerdictFailed Verdict = "Failed"
	// VerdictInvalid: the tool printed numbers that are not to be trusted.
	VerdictInvalid Verdict = "Invalid"
)

// RepetitionStatus is one measurement of one step.
type RepetitionStatus struct {
	// Index counts from 1.
	Index int32 `json:"index"`
	// Job that measured it.
	// +optional
	Job     string  `json:"job,omitempty"`
	Verdict Verdict `json:"verdict"`
	// Reasons the measurement is not trusted, if any.
	// +optional
	Reasons []string `json:"reasons,omitempty"`
	// +optional
	Node string `json:"node,omitempty"`
	// Message says in one line what the run waits for when something
	// keeps it from going on (a pod that cannot start), or why it failed
	// or is not valid: the condition that says so, its reason and message
	// (the tool's own error lines for a failed prepare step). Empty while
	// all goes well and on success. A printer column.
	// +optional
	Message string `json:"message,omitempty"`

	// Deadline is the deadline of what the run waits for now
	// (spec.deadlines): the phase, what for, when its clock started and
	// when it passes. Unset when the phase has none.
	// +optional
	Deadline *DeadlineStatus `json:"deadline,omitempty"`

	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// LoadGeneratorCPUPercent is the load generator's CPU use as a percent
	// of what it may use.
	// +optional
	LoadGeneratorCPUPercent *float64 `json:"loadGeneratorCPUPercent,omitempty"`
	// Metrics are the status metrics: a bounded set (the primary always,
	// at most 16); every metric is in the results ConfigMap.
	// +optional
	Metrics []MetricValue `json:"metrics,omitempty"`
}

// Direction says which way a metric improves.
// +kubebuilder:validation:Enum=HigherIsBetter;LowerIsBetter;Neutral
type Direction string

const (
	HigherIsBetter Direction = "HigherIsBetter"
	LowerIsBetter  Direction = "LowerIsBetter"
	Neutral        Direction = "Neutral"
)

// MetricValue is one number with its unit.
type MetricValue struct {
	// Name carries the unit's sense: opsPerSecond, latencyP99Millis.
	Name string `json:"name"`
	// Operation the metric is about, such as GET or Totals; empty for the whole run.
	// +optional
	Operation string    `json:"operation,omitempty"`
	Value     float64   `json:"value"`
	Unit      string    `json:"unit"`
	Direction Direction `json:"direction"`
	// Source names the telemetry source of a figure of the servers' side
	// (postgresql, mysql, redis: the database's own statistics; prometheus,
	// kubernetes: resources), its operation then saying whose it is
	// (server, target, target/<pod>, loadgen/<pod>, node/<name>). Empty
	// for what the tool measured.
	// +optional
	Source string `json:"source,omitempty"`
}

// MetricSummary summarises one metric of one step over its valid repetitions.
type MetricSummary struct {
	Name string `json:"name"`
	// +optional
	Operation string    `json:"operation,omitempty"`
	Unit      string    `json:"unit"`
	Direction Direction `json:"direction"`
	// Source names the telemetry source of a figure of the servers' side,
	// as in MetricValue.
	// +optional
	Source string `json:"source,omitempty"`
	// N is the number of valid repetitions summarised.
	N      int32   `json:"n"`
	Median float64 `json:"median"`
	Mean   float64 `json:"mean"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CILow and CIHigh bound the 95 % confidence interval of the mean
	// (Student's t); absent below two repetitions.
	// +optional
	CILow *float64 `json:"ciLow,omitempty"`
	// +optional
	CIHigh *float64 `json:"ciHigh,omitempty"`
	// CoefficientOfVariationPercent is the sample standard deviation over
	// the mean; absent below two repetitions.
	// +optional
	CoefficientOfVariationPercent *float64 `json:"cvPercent,omitempty"`
}

// PrimaryMetric is the headline number of the run: the median of the
// workload's primary metric at the best step.
type PrimaryMetric struct {
	Name string `json:"name"`
	// +optional
	Operation string  `json:"operation,omitempty"`
	Step      string  `json:"step"`
	Value     float64 `json:"value"`
	Unit      string  `json:"unit"`
	// Display is the printer column: "4413 tps (clients=20)".
	Display string `json:"display"`
	// TargetCPUCores is the target's CPU at that step (the median over its
	// valid repetitions): summed over its pods when a resource source
	// measured them, else the server's own count (Valkey/Redis); absent
	// when nothing measured it.
	// +optional
	TargetCPUCores *float64 `json:"targetCPUCores,omitempty"`
	// EfficiencyPerTargetCore is the primary throughput per target CPU
	// core at that step.
	// +optional
	EfficiencyPerTargetCore *float64 `json:"efficiencyPerTargetCore,omitempty"`
}

// Environment is where the run ran.
type Environment struct {
	// Nodes used by the target and the load generators.
	// +optional
	Nodes []NodeInfo `json:"nodes,omitempty"`
	// Instances are the target's pods, with their roles (primary,
	// replica, shard, keeper, server), and the load generators' (loadgen),
	// each with its node, pool and zone.
	// +kubebuilder:validation:MaxItems=512
	// +optional
	Instances []InstanceInfo `json:"instances,omitempty"`
	// Volumes of the target besides its data directory's defaults: data,
	// WAL and tablespaces with their storage classes and sizes.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Volumes []VolumeInfo `json:"volumes,omitempty"`
	// Images used, by role.
	// +optional
	Images map[string]string `json:"images,omitempty"`
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// +optional
	OperatorVersion string `json:"operatorVersion,omitempty"`
}

// NodeInfo describes one node a run used.
type NodeInfo struct {
	Name string `json:"name"`
	// Roles are target and/or loadgen.
	Roles []string `json:"roles"`
	// +optional
	Pool string `json:"pool,omitempty"`
	// +optional
	InstanceType string `json:"instanceType,omitempty"`
	// +optional
	Zone string `json:"zone,omitempty"`
	// +optional
	Arch string `json:"arch,omitempty"`
	// +optional
	KernelVersion string `json:"kernelVersion,omitempty"`
	// +optional
	OSImage string `json:"osImage,omitempty"`
	// +optional
	CPUModel string `json:"cpuModel,omitempty"`
	// +optional
	AllocatableCPU *resource.Quantity `json:"allocatableCPU,omitempty"`
	// +optional
	AllocatableMemory *resource.Quantity `json:"allocatableMemory,omitempty"`
}

// AllocatableFrom fills the allocatable fields from a node's status.
func (n *NodeInfo) AllocatableFrom(alloc corev1.ResourceList) {
	if q, ok := alloc[corev1.ResourceCPU]; ok {
		n.AllocatableCPU = &q
	}
	if q, ok := alloc[corev1.ResourceMemory]; ok {
		n.AllocatableMemory = &q
	}
}

// MeasurementProgress is the measurement a run is taking.
type MeasurementProgress struct {
	// Step is the step's name.
	Step string `json:"step"`
	// Repetition counts from 1.
	Repetition int32 `json:"repetition"`
	// Job is the measurement's Job.
	Job string `json:"job"`
	// StartTime is when its Job was created.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
}

// DisturbanceStatus is one disturbance of the measurement in progress.
type DisturbanceStatus struct {
	// Name is the disturbance's name in spec.disturbances.schedule.
	Name string `json:"name"`
	// Kind is sqlLoad, noisyNeighbour, memberLoss or network.
	Kind string `json:"kind"`
	// Job is the measurement's Job.
	Job string `json:"job"`
	// Offset is when it is requested, from the start of the tool.
	Offset metav1.Duration `json:"offset"`
	// RequestedTime is when the operator acted. The instants are to the
	// microsecond: a card's figures are differences of them.
	// +optional
	RequestedTime *metav1.MicroTime `json:"requestedTime,omitempty"`
	// TookEffectTime is when the object it acted on showed it: the pod
	// gone, the stress pod running, the chaos object injected.
	// +optional
	TookEffectTime *metav1.MicroTime `json:"tookEffectTime,omitempty"`
	// EndedTime is when it stopped acting (the stress pod or chaos object
	// deleted); unset for a member loss.
	// +optional
	EndedTime *metav1.MicroTime `json:"endedTime,omitempty"`
	// RemovedTime is when what it created was gone and the node it
	// cordoned uncordoned: nothing of it is left behind.
	// +optional
	RemovedTime *metav1.MicroTime `json:"removedTime,omitempty"`
	// Member is the pod it acted on; Node its node.
	// +optional
	Member string `json:"member,omitempty"`
	// +optional
	Node string `json:"node,omitempty"`
	// Object is what it created (the stress pod, the chaos object).
	// +optional
	Object string `json:"object,omitempty"`
	// NewPrimary is the primary the target reported after a member loss,
	// at NewPrimaryTime; FullRedundancyTime is when every instance was
	// ready again.
	// +optional
	NewPrimary string `json:"newPrimary,omitempty"`
	// +optional
	NewPrimaryTime *metav1.MicroTime `json:"newPrimaryTime,omitempty"`
	// +optional
	FullRedundancyTime *metav1.MicroTime `json:"fullRedundancyTime,omitempty"`
	// Message says what happened, or why it could not act.
	// +optional
	Message string `json:"message,omitempty"`
}
