package workloads

import benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"

// SQLProtocol is implemented by tools that reach their target over a SQL
// wire protocol: after each measurement the runner checks, on a session of
// the workload's user, what that protocol lets it check (MySQL's: the TLS
// version and cipher negotiated and the session variables the endpoint
// asks for).
type SQLProtocol interface {
	// SQLProtocol names the protocol the tool speaks for this spec
	// (pod.ProtocolMySQL, pod.ProtocolPostgreSQL), or "" when it speaks none.
	SQLProtocol(spec *benchv1.WorkloadSpec) string
}

// SQLProtocolOf asks a workload which SQL protocol it speaks, if any.
func SQLProtocolOf(w Workload, spec *benchv1.WorkloadSpec) string {
	if p, ok := w.(SQLProtocol); ok {
		return p.SQLProtocol(spec)
	}
	return ""
}
