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

var _ workloads.SQLProtocol = HammerDB{}

// SQLProtocol: HammerDB speaks MySQL's protocol to MySQL, PostgreSQL's to
// PostgreSQL.
func (HammerDB) SQLProtocol(spec *benchv1.WorkloadSpec) string {
	if spec.HammerDB != nil && spec.HammerDB.Database == benchv1.HammerDBMySQL {
		return pod.ProtocolMySQL
	}
	return pod.ProtocolPostgreSQL
}
