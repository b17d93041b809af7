package hammerdb

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Shrink keeps a TPROC-C workload's database and driver options: one
// warehouse built by one user, no ramp-up, the one-minute test HammerDB
// allows at least, two virtual-user counts of at most two users.
func (HammerDB) Shrink(spec *benchv1.WorkloadSpec) []string {
	h := spec.HammerDB
	out := workloads.ShrinkCount("hammerdb.warehouses", &h.Warehouses, 1, true)
	out = append(out, workloads.ShrinkCount("hammerdb.buildVirtualUsers", &h.BuildVirtualUsers, 1, true)...)
	if h.RampUp == nil || h.RampUp.Duration > 0 {
		out = append(out, "hammerdb.rampUp → 0s")
		h.RampUp = &metav1.Duration{}
	}
	if h.Duration == nil || h.Duration.Duration > time.Minute {
		out = append(out, "hammerdb.duration → 1m0s")
		h.Duration = &metav1.Duration{Duration: time.Minute}
	}
	if h.AllWarehouses {
		h.AllWarehouses = false
		out = append(out, "hammerdb.allWarehouses → false")
	}
	out = append(out, workloads.ShrinkSweep("hammerdb.virtualUsers", &h.VirtualUsers)...)
	return append(out, workloads.ShrinkScale("hammerdb.virtualUsers", &h.VirtualUsers, 2)...)
}
