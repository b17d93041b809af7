package custom

import (
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Shrink caps a custom tool's duration ({{duration}}) at 5 s and each swept
// parameter at two values; the tool's own arguments are its own.
func (Custom) Shrink(spec *benchv1.WorkloadSpec) []string {
	c := spec.Custom
	out := workloads.ShrinkDuration("custom.duration", c.Duration, 5*time.Second)
	for i := range c.Parameters {
		out = append(out, workloads.ShrinkSweep("custom.parameters."+c.Parameters[i].Name, &c.Parameters[i].Values)...)
	}
	return out
}
