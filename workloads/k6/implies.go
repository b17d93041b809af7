package k6

import "github.com/dbperf-io/dbperf-operator/workloads"

var _ workloads.Sweeper = K6{}

// SweptLists: the steps are its VU counts (Steps).
func (K6) SweptLists() []workloads.SweptList {
	return []workloads.SweptList{{Field: "vus"}}
}
