package redisbenchmark

import "github.com/dbperf-io/dbperf-operator/workloads"

var _ workloads.Sweeper = RedisBenchmark{}

// SweptLists: the steps are its clients by its pipeline depths (Steps).
func (RedisBenchmark) SweptLists() []workloads.SweptList {
	return []workloads.SweptList{{Field: "clients"}, {Field: "pipeline"}}
}
