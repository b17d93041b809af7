package hammerdb

import (
	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

var _ workloads.TargetNeeds = HammerDB{}

// NeedsAdministrator is true: HammerDB's schema build creates its own
// database and schema user, which on PostgreSQL takes the superuser (the
// script of every step names it, as tpcc superuser).
func (HammerDB) NeedsAdministrator(*benchv1.WorkloadSpec) bool { return true }

var _ workloads.Speaker = HammerDB{}

// Speaks: HammerDB speaks MySQL's protocol to MySQL, PostgreSQL's to
// PostgreSQL, where it measures in its schema's database.
func (HammerDB) Speaks(spec *benchv1.WorkloadSpec) workloads.Speaks {
	w := spec.HammerDB
	switch {
	case w == nil:
		return workloads.Speaks{}
	case w.Database == benchv1.HammerDBMySQL:
		return workloads.Speaks{Protocol: pod.ProtocolMySQL}
	}
	return workloads.Speaks{Protocol: pod.ProtocolPostgres, Database: orDefault(w.SchemaDatabase, "tpcc")}
}
