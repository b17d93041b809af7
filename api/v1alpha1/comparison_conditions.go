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
	// ReasonNotComparable (False): a variant runs another tool, the
	// variants' steps cannot meet (spec.stepPairing), or the runs differ in
	// more than the variants' patches; the message names the patched field.
	// Decided before any run is created when the patches show it.
	ReasonNotComparable = "NotComparable"
	// ReasonNothingCompared (False): every run ended, but no metric was
	// compared for a candidate: every measurement was excluded (failed,
	// invalid or rejected), or none was measured by both sides. The
	// message says which; the report keeps what was measured.
	ReasonNothingCompared = "NothingCompared"
	// ReasonNameConflict (False): a child run's name is taken by an object
	// the comparison does not own; the message names it. The comparison
	// retries until it is removed.
	ReasonNameConflict = "NameConflict"
	// ReasonCompared (True): the report is written.
	ReasonCompared = "Compared"
)

// ConditionRegressed on a BenchmarkSchedule with spec.regression: True while
// a regression is open (from the run that introduced it until a run is back
// within the margin of the level before it, or a person acknowledges the
// new level); False when none is open, or when the history is too short to
// judge; Unknown (absent) without spec.regression.
const ConditionRegressed = "Regressed"

// ConditionImproved on a BenchmarkSchedule with spec.regression: the same of
// improvements, apart from regressions.
const ConditionImproved = "Improved"

// ConditionAcknowledged on a BenchmarkSchedule: True while its annotation
// bench.dbperf.io/acknowledgements holds acknowledgements (the newest's who,
// when and why); False once every one is undone or when the annotation is
// unreadable; absent when none was ever made.
const ConditionAcknowledged = "Acknowledged"

// Reasons of the Regressed and Improved conditions.
const (
	// ReasonRegression (Regressed True): a regression is open.
	ReasonRegression = "Regression"
	// ReasonNoRegression (Regressed False): none is open and the newest run
	// is within the margin of its level.
	ReasonNoRegression = "NoRegression"
	// ReasonNotEnoughHistory (False): the accepted level has fewer valid
	// runs than baselineRuns (the ChangePoint method at least 5); a schedule
	// of comparisons has no finished comparison yet.
	ReasonNotEnoughHistory = "NotEnoughHistory"
	// ReasonRecovered (Regressed False): the newest run ended the regression:
	// back within the margin of the level before it.
	ReasonRecovered = "Recovered"
	// ReasonAcknowledged (False): a person accepted the new level at the
	// newest run; later runs are judged against it.
	ReasonAcknowledged = "Acknowledged"
	// ReasonNotConfirmed (False): a provisional change point (one or two
	// runs) that the next runs did not bear out.
	ReasonNotConfirmed = "NotConfirmed"
	// ReasonImprovement (Improved True): an improvement is open.
	ReasonImprovement = "Improvement"
	// ReasonNoImprovement (Improved False): none is open.
	ReasonNoImprovement = "NoImprovement"
	// ReasonImprovementAdopted (Improved False): it held for baselineRuns
	// runs and is now the baseline.
	ReasonImprovementAdopted = "ImprovementAdopted"
	// ReasonImprovementEnded (Improved False): the newest run is no longer
	// better.
	ReasonImprovementEnded = "ImprovementEnded"
)

// Reasons of the Acknowledged condition (and ReasonUnreadable).
const (
	ReasonAcknowledgedByPerson = "AcknowledgedByPerson"
	ReasonNotAcknowledged      = "NotAcknowledged"
)
