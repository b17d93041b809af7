package workloads

import benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"

// TargetNeeds is implemented by tools that need more of a target than a
// client's credentials. The controller asks it once and tells the target's
// provisioner, so that target code never asks which tool is running.
type TargetNeeds interface {
	// NeedsAdministrator says the tool creates its own databases or roles,
	// so its Endpoint must carry the target's administrator account
	// (Superuser, SuperuserPassword) where the target kind can provide one.
	NeedsAdministrator(spec *benchv1.WorkloadSpec) bool
}
