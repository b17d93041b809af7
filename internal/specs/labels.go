package specs

import (
	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// Labels on everything a run creates. The run is identified by UID, because a
// run's name may be longer than a label value can be.
const (
	LabelRunUID     = "bench.dbperf.io/run-uid"
	LabelRole       = "bench.dbperf.io/role"
	LabelStep       = "bench.dbperf.io/step"
	LabelRepetition = "bench.dbperf.io/repetition"
	LabelJob        = "bench.dbperf.io/job"

	// AnnotationRunName on workload pods maps them back to their run.
	AnnotationRunName = "bench.dbperf.io/run-name"

	RoleLoadgen = "loadgen"
	RolePrepare = "prepare"
	RoleTarget  = "target"
	RoleResults = "results"
)

// BaseLabels are on every child of a run.
func BaseLabels(run *benchv1.BenchmarkRun, role string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "dbperf",
		"app.kubernetes.io/managed-by": "dbperf-operator",
		"app.kubernetes.io/component":  role,
		LabelRunUID:                    string(run.UID),
		LabelRole:                      role,
	}
}
