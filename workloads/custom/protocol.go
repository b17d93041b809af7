package custom

import (
	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

var _ workloads.SQLProtocol = Custom{}

// SQLProtocol: the protocol of the database the spec says the tool drives.
func (Custom) SQLProtocol(spec *benchv1.WorkloadSpec) string {
	if spec.Custom == nil {
		return ""
	}
	switch spec.Custom.Database {
	case benchv1.CustomMySQL:
		return pod.ProtocolMySQL
	case benchv1.CustomPostgres:
		return pod.ProtocolPostgreSQL
	}
	return ""
}
