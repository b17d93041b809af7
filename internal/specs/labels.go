package specs

import (
	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// The labels, annotations and roles of a run's children are declared once,
// with the API (users select by them): benchv1's names.

// BaseLabels are on every child of a run.
func BaseLabels(run *benchv1.BenchmarkRun, role string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "dbperf",
		"app.kubernetes.io/managed-by": "dbperf-operator",
		"app.kubernetes.io/component":  role,
		benchv1.LabelRunUID:            string(run.UID),
		benchv1.LabelRole:              role,
	}
}
