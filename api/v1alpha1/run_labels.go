package v1alpha1

// Labels and annotations on what a run creates, which users select by
// (kubectl get -l, a dashboard). A run is identified by UID, because its
// name may be longer than a label value can be.
const (
	// LabelRunUID is on every object a run creates: its target, Jobs,
	// pods, ConfigMaps and Secrets.
	LabelRunUID = "bench.dbperf.io/run-uid"
	// LabelRole says what a run's child is for: loadgen, prepare, target,
	// results or disturbance.
	LabelRole = "bench.dbperf.io/role"
	// LabelInstanceRole is on the pods of operator-owned servers: the part
	// the pod plays in its target, one of the InstanceRole values (primary,
	// replica, shard, keeper, server). status.environment.instances reads it.
	LabelInstanceRole = "bench.dbperf.io/instance-role"
	// LabelStep and LabelRepetition are on measurement Jobs and their pods:
	// the step's index in the sweep and the repetition, from 1.
	LabelStep       = "bench.dbperf.io/step"
	LabelRepetition = "bench.dbperf.io/repetition"
	// LabelJob names the Job of a workload pod.
	LabelJob = "bench.dbperf.io/job"

	// AnnotationRunName on workload pods maps them back to their run.
	AnnotationRunName = "bench.dbperf.io/run-name"
)

// Values of LabelRole.
const (
	RoleLoadgen = "loadgen"
	RolePrepare = "prepare"
	RoleTarget  = "target"
	RoleResults = "results"
	// RoleDisturbance is a pod a disturbance runs beside the target (a
	// noisy neighbour's stress pod).
	RoleDisturbance = "disturbance"
)
