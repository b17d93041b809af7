package v1alpha1

// Condition types and reasons of BenchmarkComparison and BenchmarkSchedule
// (those of BenchmarkRun are in conditions.go). Each type is also listed in
// its status' conditions field, so that `kubectl explain` shows it.

// ConditionCompared on a BenchmarkComparison: True once every run has ended
// and the report is written; False while runs are in progress or when the
// comparison cannot be made (the reason says which); Unknown (absent) before
// the operator has looked.
const ConditionCompared = "Compared"

// Reasons of the Compared condition.
const (
	// ReasonRunning (False): child runs are in progress; the message gives
	// the progress.
	ReasonRunning = "Running"
	// ReasonInvalidPatch (False): a variant's patch does not apply, or does
	// not give a BenchmarkRun spec the API server accepts.
	ReasonInvalidPatch = "InvalidPatch"
	// ReasonNotComparable (False): the runs differ in more than the
	// variants' patches, or have no measurements in common.
	ReasonNotComparable = "NotComparable"
	// ReasonNameConflict (False): a child run's name is taken by an object
	// the comparison does not own; the message names it. The comparison
	// retries until it is removed.
	ReasonNameConflict = "NameConflict"
	// ReasonCompared (True): the report is written.
	ReasonCompared = "Compared"
)

// ConditionRegressed on a BenchmarkSchedule with spec.regression: True when
// the newest result is a regression by the policy (the message names the
// metric, the change and the run that introduced it); False when it is not,
// or when the history is too short to judge; Unknown (absent) without
// spec.regression.
const ConditionRegressed = "Regressed"

// Reasons of the Regressed condition.
const (
	// ReasonRegression (True): the newest result is worse by the policy.
	ReasonRegression = "Regression"
	// ReasonNoRegression (False): it is not.
	ReasonNoRegression = "NoRegression"
	// ReasonNotEnoughHistory (False): too few valid results to judge (a
	// baseline needs one earlier valid run, change points ten).
	ReasonNotEnoughHistory = "NotEnoughHistory"
)
