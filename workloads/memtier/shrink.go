package memtier

import (
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Shrink keeps a memtier workload's commands and ratio: 5 s, 10,000 keys,
// two steps at most of each swept list, few connections.
func (Memtier) Shrink(spec *benchv1.WorkloadSpec) []string {
	m := spec.Memtier
	out := workloads.ShrinkDuration("memtier.duration", &m.Duration, 5*time.Second)
	if m.KeyMaximum == 0 || m.KeyMaximum > 10000 {
		out = append(out, "memtier.keyMaximum → 10000")
		m.KeyMaximum = 10000
	}
	if m.KeyMinimum > m.KeyMaximum {
		m.KeyMinimum = 1
	}
	out = append(out, workloads.ShrinkSweep("memtier.threads", &m.Threads)...)
	out = append(out, workloads.ShrinkScale("memtier.threads", &m.Threads, 2)...)
	out = append(out, workloads.ShrinkSweep("memtier.pipeline", &m.Pipeline)...)
	return append(out, workloads.ShrinkCount("memtier.clients", &m.Clients, 4, true)...)
}
