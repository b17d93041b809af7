package osb

import "github.com/dbperf-io/dbperf-operator/workloads"

var _ workloads.Sweeper = OSB{}

// SweptLists: the steps are its client counts (Steps).
func (OSB) SweptLists() []workloads.SweptList {
	return []workloads.SweptList{{Field: "clients"}}
}
