// Package registry is the one list of load tools. Adding a tool adds a line
// here, its package, and its field in the API; nothing else.
package registry

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

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

// entry is one tool and its member of WorkloadSpec, as JSON spells it.
type entry struct {
	workload workloads.Workload
	field    string
}

var entries = []entry{
	{pgbench.Pgbench{}, "pgbench"},
	{memtier.Memtier{}, "memtier"},
	{redisbenchmark.RedisBenchmark{}, "redisBenchmark"},
	{ycsb.YCSB{}, "ycsb"},
	{k6.K6{}, "k6"},
	{osb.OSB{}, "osb"},
	{hammerdb.HammerDB{}, "hammerdb"},
	{query.Query{}, "queryBench"},
	{custom.Custom{}, "custom"},
}

// fieldIndex is each entry's field's index in WorkloadSpec, found once: a
// field the spec does not have is a mistake of this file, which every use
// of the registry would meet, so it panics at start.
var fieldIndex = func() map[string]int {
	byJSON := map[string]int{}
	typ := reflect.TypeOf(benchv1.WorkloadSpec{})
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if typ.Field(i).Type.Kind() == reflect.Pointer {
			byJSON[name] = i
		}
	}
	out := map[string]int{}
	for _, e := range entries {
		i, ok := byJSON[e.field]
		if !ok {
			panic(fmt.Sprintf("registry: WorkloadSpec has no member %q for %s", e.field, e.workload.Name()))
		}
		out[e.field] = i
	}
	return out
}()

// selected says whether a spec sets the entry's member.
func (e entry) selected(spec *benchv1.WorkloadSpec) bool {
	return !reflect.ValueOf(spec).Elem().Field(fieldIndex[e.field]).IsNil()
}

// Tool is one registered load tool and its member of WorkloadSpec.
type Tool struct {
	Workload workloads.Workload
	// Field is the member as JSON spells it: "redisBenchmark".
	Field string
}

// Tools lists the registered tools in the registry's order.
func Tools() []Tool {
	out := make([]Tool, 0, len(entries))
	for _, e := range entries {
		out = append(out, Tool{Workload: e.workload, Field: e.field})
	}
	return out
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
