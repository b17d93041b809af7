package custom

import (
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// The custom tool speaks the protocol of the database its spec names, so
// that a measurement against MySQL gets the session check.
func TestSQLProtocol(t *testing.T) {
	for db, checked := range map[benchv1.CustomDatabase]bool{
		benchv1.CustomMySQL: true, benchv1.CustomPostgres: false, benchv1.CustomValkey: false, "": false,
	} {
		spec := &benchv1.WorkloadSpec{Custom: &benchv1.CustomWorkload{Database: db}}
		if got := workloads.SpeaksOf(Custom{}, spec).Protocol; got.Checked() != checked {
			t.Errorf("%q: speaks %q, whose session is checked: %v, want %v", db, got, got.Checked(), checked)
		}
	}
}
