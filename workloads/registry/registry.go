// Package registry is the one list of load tools. Adding a tool adds a line
// here, its package, and its field in the API; nothing else.
package registry

import (
	"fmt"
	"sort"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/custom"
	"github.com/dbperf-io/dbperf-operator/workloads/hammerdb"
	"github.com/dbperf-io/dbperf-operator/workloads/k6"
	"github.com/dbperf-io/dbperf-operator/workloads/memtier"
	"github.com/dbperf-io/dbperf-operator/workloads/osb"
	"github.com/dbperf-io/dbperf-operator/workloads/pgbench"
	"github.com/dbperf-io/dbperf-operator/workloads/query"
	"github.com/dbperf-io/dbperf-operator/workloads/redisbenchmark"
	"github.com/dbperf-io/dbperf-operator/workloads/ycsb"
)

type entry struct {
	workload workloads.Workload
	selected func(*benchv1.WorkloadSpec) bool
}

var entries = []entry{
	{pgbench.Pgbench{}, func(s *benchv1.WorkloadSpec) bool { return s.Pgbench != nil }},
	{memtier.Memtier{}, func(s *benchv1.WorkloadSpec) bool { return s.Memtier != nil }},
	{redisbenchmark.RedisBenchmark{}, func(s *benchv1.WorkloadSpec) bool { return s.RedisBenchmark != nil }},
	{ycsb.YCSB{}, func(s *benchv1.WorkloadSpec) bool { return s.YCSB != nil }},
	{k6.K6{}, func(s *benchv1.WorkloadSpec) bool { return s.K6 != nil }},
	{osb.OSB{}, func(s *benchv1.WorkloadSpec) bool { return s.OSB != nil }},
	{hammerdb.HammerDB{}, func(s *benchv1.WorkloadSpec) bool { return s.HammerDB != nil }},
	{query.Query{}, func(s *benchv1.WorkloadSpec) bool { return s.QueryBench != nil }},
	{custom.Custom{}, func(s *benchv1.WorkloadSpec) bool { return s.Custom != nil }},
}

// For returns the workload a spec selects.
func For(spec *benchv1.WorkloadSpec) (workloads.Workload, error) {
	var found []workloads.Workload
	for _, e := range entries {
		if e.selected(spec) {
			found = append(found, e.workload)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("exactly one workload must be set, found %d", len(found))
	}
	return found[0], nil
}

// ByName returns the workload with a name, as `dbperf-runner --workload` takes it.
func ByName(name string) (workloads.Workload, error) {
	for _, e := range entries {
		if e.workload.Name() == name {
			return e.workload, nil
		}
	}
	return nil, fmt.Errorf("unknown workload %q (known: %v)", name, Names())
}

// Names lists the known workloads.
func Names() []string {
	var names []string
	for _, e := range entries {
		names = append(names, e.workload.Name())
	}
	sort.Strings(names)
	return names
}
