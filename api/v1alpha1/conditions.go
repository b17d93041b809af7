package v1alpha1

// Condition types of a BenchmarkRun and what their statuses mean.
const (
	// ConditionTargetReady: True when the database under test accepts
	// connections (CNPG reports the cluster healthy, the StatefulSet's pods are
	// ready, or an external target's Secret exists); False with a reason while
	// it is not (Provisioning, CRDNotInstalled, SecretNotFound, SwitchingOver,
	// PlacementUnsatisfied, ClusterNotCreated); Unknown before
	// the operator has looked.
	ConditionTargetReady = "TargetReady"

	// ConditionPrepared: True when the prepare step (schema build, data load)
	// finished or the workload needs none; False while it runs or after it failed.
	ConditionPrepared = "Prepared"

	// ConditionCompleted: True when every measurement has finished and the
	// results are written; False while measurements remain; its reason says how
	// the run ended (AllMeasured, Timeout, PrepareFailed, PodNotStarted,
	// DeadlineExceeded, ...). TargetReady, Prepared and Completed are False
	// with reason PodNotStarted while a pod of their phase cannot start.
	ConditionCompleted = "Completed"

	// ConditionValid: True when every measurement passed the validity checks;
	// False with the reasons of the first failing ones; Unknown until the first
	// measurement is collected.
	ConditionValid = "Valid"

	// ConditionAdmitted: True once the run may use its nodes; False, with
	// the phase Queued and reason WaitingForNodes, while another run's target
	// or load generators may land on the same nodes (unless
	// spec.allowSharedNodes); the message names that run.
	ConditionAdmitted = "Admitted"

	// ConditionRejected: True when a person rejected measurements of the
	// run (annotation bench.dbperf.io/rejections, `kubectl dbperf
	// reject`): the message says which, by whom and why; they are left out
	// of comparisons and schedule histories, their results kept. False
	// (reason NotRejected) once every rejection is undone; absent when
	// none was ever made. Reason Unreadable when the annotation is not a
	// list of rejections (then nothing is rejected).
	ConditionRejected = "Rejected"
)

// Reasons of ConditionRejected.
const (
	ReasonRejectedByPerson = "RejectedByPerson"
	ReasonNotRejected      = "NotRejected"
	ReasonUnreadable       = "Unreadable"
)

// Condition reasons.
const (
	// ReasonPending (Unknown): the operator has not evaluated the condition yet.
	ReasonPending         = "Pending"
	ReasonProvisioning    = "Provisioning"
	ReasonReady           = "Ready"
	ReasonCRDNotInstalled = "CRDNotInstalled"
	// ReasonSwitchingOver (TargetReady False): the primary is being
	// switched over to an instance on target.placement.
	ReasonSwitchingOver = "SwitchingOver"
	// ReasonPlacementUnsatisfied (TargetReady False): an instance is not
	// where target.placement or target.replicaPlacement asks; the message
	// says which, on which node and zone.
	ReasonPlacementUnsatisfied = "PlacementUnsatisfied"
	// ReasonClusterNotCreated (TargetReady False): the Job that joins a
	// Valkey Cluster's servers failed; the message says what it said.
	ReasonClusterNotCreated = "ClusterNotCreated"
	ReasonSecretNotFound    = "SecretNotFound"
	ReasonInvalidSpec       = "InvalidSpec"
	// ReasonImageNotAllowed (Completed and Valid False, phase Failed): a
	// default image the run would use, or the runner image, does not start
	// with one of the manager's --allowed-images; the message names it.
	ReasonImageNotAllowed = "ImageNotAllowed"
	ReasonPreparing       = "Preparing"
	ReasonPrepareFailed   = "PrepareFailed"
	ReasonNotNeeded       = "NotNeeded"
	// ReasonSkipped (Prepared=True): spec.workload.skipPrepare.
	ReasonSkipped         = "Skipped"
	ReasonPrepared        = "Prepared"
	ReasonMeasuring       = "Measuring"
	ReasonAllMeasured     = "AllMeasured"
	ReasonTimeout         = "Timeout"
	ReasonAllValid        = "AllValid"
	ReasonSomeInvalid     = "SomeInvalid"
	ReasonSomeFailed      = "SomeFailed"
	ReasonAwaitingResults = "AwaitingResults"
	ReasonUnstable        = "Unstable"
	ReasonAdmitted        = "Admitted"
	ReasonWaitingForNodes = "WaitingForNodes"
	// ReasonResultsLost (Valid=False): the run timed out while status
	// recorded measurements whose results its ConfigMap no longer held.
	ReasonResultsLost = "ResultsLost"
)
