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

// ServerStatistics is implemented by tools that talk to their target in a
// protocol whose statistics dbperf-runner can poll while the tool runs
// (the server's side of a measurement: dbstats' sources).
type ServerStatistics interface {
	// ServerStatistics names the statistics the target keeps (one of
	// dbstats.Sources) and the database the tool measures in, when that is
	// not the endpoint's (HammerDB's schema); "" when there are none.
	ServerStatistics(spec *benchv1.WorkloadSpec) (source, database string)
}

// ServerStatisticsOf asks a workload which statistics its target keeps.
func ServerStatisticsOf(w Workload, spec *benchv1.WorkloadSpec) (source, database string) {
	if s, ok := w.(ServerStatistics); ok {
		return s.ServerStatistics(spec)
	}
	return "", ""
}
