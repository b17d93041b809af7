package specs

import (
	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// The labels and annotations of a run's children, declared with the API
// (users select by them).
const (
	LabelRunUID = benchv1.LabelRunUID
	LabelRole   = benchv1.LabelRole
	// LabelInstanceRole is on every target pod the operator runs: its
	// benchv1.InstanceRole (primary, replica, shard, or server for the one
	// server of an unreplicated target), which status.environment.instances
	// records.
	LabelInstanceRole = benchv1.LabelInstanceRole
	LabelStep         = benchv1.LabelStep
	LabelRepetition   = benchv1.LabelRepetition
	LabelJob          = benchv1.LabelJob
	AnnotationRunName = benchv1.AnnotationRunName

	RoleLoadgen = benchv1.RoleLoadgen
	RolePrepare = benchv1.RolePrepare
	RoleTarget  = benchv1.RoleTarget
	RoleResults = benchv1.RoleResults
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
