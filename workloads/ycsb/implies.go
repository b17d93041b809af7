package ycsb

import "github.com/dbperf-io/dbperf-operator/workloads"

var _ workloads.Sweeper = YCSB{}

// SweptLists: the steps are its thread counts (Steps).
func (YCSB) SweptLists() []workloads.SweptList {
	return []workloads.SweptList{{Field: "threads"}}
}
