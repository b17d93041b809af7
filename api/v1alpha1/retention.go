package v1alpha1

// DeletionPolicy says what becomes of the results of a BenchmarkSchedule or
// a BenchmarkComparison when it is deleted (by a person, or by a GitOps
// tool that prunes it or recreates it).
// +kubebuilder:validation:Enum=Retain;Delete
type DeletionPolicy string

const (
	// DeletionRetain keeps the results: before the object goes, the
	// operator releases what it made (the runs and comparisons of a
	// schedule; the runs and the report ConfigMap of a comparison) by
	// removing the object's owner reference from them and marking them
	// with the annotation bench.dbperf.io/released-from. A run in progress
	// keeps running to completion. Each run's own results ConfigMap stays
	// the run's. Deleting what was released is then a separate, explicit
	// step (kubectl delete benchmarkruns -l bench.dbperf.io/schedule=UID).
	DeletionRetain DeletionPolicy = "Retain"
	// DeletionDelete deletes the results with the object: Kubernetes'
	// garbage collector deletes its runs, comparisons and ConfigMaps, and
	// stops the runs in progress.
	DeletionDelete DeletionPolicy = "Delete"
)

const (
	// FinalizerReleaseResults is on a schedule or comparison whose
	// deletionPolicy is Retain: the operator releases its children before
	// it removes the finalizer. A comparison that a schedule still controls
	// carries none: the schedule decides (its history limits delete old
	// comparisons with their runs, and its own deletionPolicy applies when
	// it is deleted).
	FinalizerReleaseResults = "bench.dbperf.io/release-results"
	// AnnotationReleasedFrom is on a run, comparison or report ConfigMap
	// whose parent was deleted with deletionPolicy Retain: the parent's
	// kind and name, "BenchmarkSchedule/nightly". The labels naming the
	// parent's UID (bench.dbperf.io/schedule, bench.dbperf.io/comparison)
	// stay, so the released objects are still selected by them.
	AnnotationReleasedFrom = "bench.dbperf.io/released-from"
)

// The reason of the events said when results are released (an event's,
// not a condition's).
const (
	// EventResultsReleased (on the parent and on each child released):
	// the parent is being deleted with deletionPolicy Retain and the child
	// stays.
	EventResultsReleased = "ResultsReleased"
)
