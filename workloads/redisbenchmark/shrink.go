package redisbenchmark

import (
	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Shrink keeps redis-benchmark's tests: 20,000 requests, 10,000 keys, two
// steps at most of each swept list.
func (RedisBenchmark) Shrink(spec *benchv1.WorkloadSpec) []string {
	r := spec.RedisBenchmark
	out := workloads.ShrinkCount("redisBenchmark.requests", &r.Requests, 20000, true)
	out = append(out, workloads.ShrinkCount("redisBenchmark.keySpace", &r.KeySpace, 10000, false)...)
	out = append(out, workloads.ShrinkSweep("redisBenchmark.clients", &r.Clients)...)
	return append(out, workloads.ShrinkSweep("redisBenchmark.pipeline", &r.Pipeline)...)
}
