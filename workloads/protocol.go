package workloads

import (
	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// Speaks is what a tool's target speaks: the protocol the tool talks to it
// in, and the database the tool measures in when that is not the
// endpoint's (HammerDB's schema, queryBench's database).
type Speaks struct {
	Protocol pod.Protocol
	Database string
}

// Speaker is implemented by tools that reach their target in a database's
// protocol. Tools only describe it; the pod connects to the target in it
// by itself: it polls the server's statistics (a protocol that
// HasStatistics) and, after each measurement, checks a session of the
// workload's user (a protocol that is Checked: MySQL's TLS version and
// cipher negotiated and session variables).
type Speaker interface {
	// Speaks says what the tool speaks for this spec; zero when nothing
	// the pod connects in.
	Speaks(spec *benchv1.WorkloadSpec) Speaks
}

// SpeaksOf asks a workload what its target speaks.
func SpeaksOf(w Workload, spec *benchv1.WorkloadSpec) Speaks {
	if s, ok := w.(Speaker); ok {
		return s.Speaks(spec)
	}
	return Speaks{}
}
