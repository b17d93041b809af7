package pgbench

import (
	"fmt"
	"slices"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Shrink keeps a pgbench workload's script and protocol: scale 1, 5 s, two
// client counts at most, eight clients at most.
func (Pgbench) Shrink(spec *benchv1.WorkloadSpec) []string {
	p := spec.Pgbench
	out := workloads.ShrinkCount("pgbench.scale", &p.Scale, 1, false)
	out = append(out, workloads.ShrinkDuration("pgbench.duration", &p.Duration, 5*time.Second)...)
	out = append(out, workloads.ShrinkSweep("pgbench.clients", &p.Clients)...)
	// Many clients' connections alone can take the few seconds a smoke run
	// measures on a loaded machine.
	out = append(out, workloads.ShrinkScale("pgbench.clients", &p.Clients, 8)...)
	// pgbench refuses more threads than clients.
	if least := slices.Min(p.Clients); p.Jobs != nil && *p.Jobs > least {
		out = append(out, fmt.Sprintf("pgbench.jobs %d → %d", *p.Jobs, least))
		p.Jobs = &least
	}
	return out
}
