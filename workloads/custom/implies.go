package custom

import "github.com/dbperf-io/dbperf-operator/workloads"

var (
	_ workloads.Sweeper         = Custom{}
	_ workloads.TargetKindNamer = Custom{}
)

// maxParameters is the schema's maxItems of custom.parameters.
const maxParameters = 4

// SweptLists: the steps are the product of the numbers of values of the
// parameters (Steps).
func (Custom) SweptLists() []workloads.SweptList {
	return []workloads.SweptList{{Field: "parameters", Each: "values", MaxItems: maxParameters}}
}

// TargetKindField: database, when set, is the kind of the target the tool
// drives, whose statistics the runner polls.
func (Custom) TargetKindField() string { return "database" }
