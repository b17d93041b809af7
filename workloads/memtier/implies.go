package memtier

import "github.com/dbperf-io/dbperf-operator/workloads"

var _ workloads.Sweeper = Memtier{}

// SweptLists: the steps are its threads by its pipeline depths (Steps).
func (Memtier) SweptLists() []workloads.SweptList {
	return []workloads.SweptList{{Field: "threads"}, {Field: "pipeline"}}
}
