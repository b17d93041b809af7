package query

import (
	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Shrink runs each query twice (a cold run and one hot).
func (Query) Shrink(spec *benchv1.WorkloadSpec) []string {
	return workloads.ShrinkCount("queryBench.runsPerQuery", &spec.QueryBench.RunsPerQuery, 2, true)
}
