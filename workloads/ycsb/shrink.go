package ycsb

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Shrink keeps a YCSB workload's mix and binding: 500 records, 2,000
// operations within 30 s, two thread counts at most.
func (YCSB) Shrink(spec *benchv1.WorkloadSpec) []string {
	y := spec.YCSB
	out := workloads.ShrinkCount("ycsb.recordCount", &y.RecordCount, 500, true)
	out = append(out, workloads.ShrinkCount("ycsb.operationCount", &y.OperationCount, 2000, true)...)
	if y.MaxExecutionTime == nil || y.MaxExecutionTime.Duration > 30*time.Second {
		out = append(out, "ycsb.maxExecutionTime → 30s")
		y.MaxExecutionTime = &metav1.Duration{Duration: 30 * time.Second}
	}
	out = append(out, workloads.ShrinkCount("ycsb.loadThreads", &y.LoadThreads, 4, false)...)
	out = append(out, workloads.ShrinkSweep("ycsb.threads", &y.Threads)...)
	return append(out, workloads.ShrinkScale("ycsb.threads", &y.Threads, 8)...)
}
