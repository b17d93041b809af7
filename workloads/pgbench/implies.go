package pgbench

import "github.com/dbperf-io/dbperf-operator/workloads"

var _ workloads.Sweeper = Pgbench{}

// SweptLists: the steps are its clients (Steps).
func (Pgbench) SweptLists() []workloads.SweptList {
	return []workloads.SweptList{{Field: "clients"}}
}
