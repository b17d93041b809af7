package osb

import (
	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Shrink runs OpenSearch Benchmark in its test mode (a thousand documents
// of the corpus, one iteration of each task) with two client counts at
// most.
func (OSB) Shrink(spec *benchv1.WorkloadSpec) []string {
	o := spec.OSB
	var out []string
	if o.WorkloadParams["test_mode"] != "true" {
		if o.WorkloadParams == nil {
			o.WorkloadParams = map[string]string{}
		}
		o.WorkloadParams["test_mode"] = "true"
		out = append(out, "osb test mode")
	}
	return append(out, workloads.ShrinkSweep("osb.clients", &o.Clients)...)
}
