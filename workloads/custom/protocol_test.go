package custom

import (
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// The custom tool speaks the protocol of the database its spec names, so
// that a measurement against MySQL gets the session check.
func TestSQLProtocol(t *testing.T) {
	for db, want := range map[benchv1.CustomDatabase]string{
		benchv1.CustomMySQL: pod.ProtocolMySQL, benchv1.CustomPostgres: pod.ProtocolPostgreSQL,
		benchv1.CustomValkey: "", "": "",
	} {
		spec := &benchv1.WorkloadSpec{Custom: &benchv1.CustomWorkload{Database: db}}
		if got := workloads.SQLProtocolOf(Custom{}, spec); got != want {
			t.Errorf("%q: %q, want %q", db, got, want)
		}
	}
}
