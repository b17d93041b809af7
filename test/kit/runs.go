package kit

import (
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// RunBuilder builds a BenchmarkRun for a test, the fields it cares about
// named: MakeRun("r").External().Pgbench(16).Repetitions(2).Obj().
type RunBuilder struct{ run benchv1.BenchmarkRun }

// MakeRun starts a run of that name, with no target and no workload.
func MakeRun(name string) *RunBuilder {
	return &RunBuilder{run: benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name}}}
}

// Target is the run's target.
func (b *RunBuilder) Target(t benchv1.TargetSpec) *RunBuilder {
	b.run.Spec.Target = t
	return b
}

// External targets ExternalDB.
func (b *RunBuilder) External() *RunBuilder { return b.Target(ExternalDB()) }

// Pgbench measures pgbench, scale 1, for a minute at each client count,
// on the loadgen pool.
func (b *RunBuilder) Pgbench(clients ...int32) *RunBuilder {
	b.run.Spec.Workload = benchv1.WorkloadSpec{
		Pgbench:   &benchv1.PgbenchWorkload{Scale: 1, Clients: clients, Duration: metav1.Duration{Duration: 60 * time.Second}},
		Placement: benchv1.Placement{NodeSelector: map[string]string{"pool": "loadgen"}},
	}
	return b
}

// Workload is the run's workload.
func (b *RunBuilder) Workload(w benchv1.WorkloadSpec) *RunBuilder {
	b.run.Spec.Workload = w
	return b
}

// SkipPrepare leaves the prepare step out: the first Job is a measurement.
func (b *RunBuilder) SkipPrepare() *RunBuilder {
	b.run.Spec.Workload.SkipPrepare = true
	return b
}

// Repetitions is spec.repetitions.
func (b *RunBuilder) Repetitions(n int32) *RunBuilder {
	b.run.Spec.Repetitions = n
	return b
}

// Cleanup is spec.cleanup.
func (b *RunBuilder) Cleanup(p benchv1.CleanupPolicy) *RunBuilder {
	b.run.Spec.Cleanup = p
	return b
}

// Timeout is spec.timeout.
func (b *RunBuilder) Timeout(d time.Duration) *RunBuilder {
	b.run.Spec.Timeout = &metav1.Duration{Duration: d}
	return b
}

// Labels are the run's labels.
func (b *RunBuilder) Labels(l map[string]string) *RunBuilder {
	b.run.Labels = l
	return b
}

// Obj is the run built.
func (b *RunBuilder) Obj() *benchv1.BenchmarkRun { return b.run.DeepCopy() }

// ExternalDB is an endpoint the tests never connect to: their kubelet
// replays recorded tool outputs.
func ExternalDB() benchv1.TargetSpec {
	return benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "db", Port: 5432}}
}

// PgbenchRun is a pgbench run against target, a step per client count.
func PgbenchRun(name string, target benchv1.TargetSpec, clients []int32, reps int32) *benchv1.BenchmarkRun {
	return MakeRun(name).Target(target).Pgbench(clients...).Repetitions(reps).Obj()
}

// MeasureOnly is a pgbench run against ExternalDB with no prepare step, so
// its first Job is a measurement.
func MeasureOnly(name string, clients int32, reps int32) *benchv1.BenchmarkRun {
	return MakeRun(name).External().Pgbench(clients).Repetitions(reps).SkipPrepare().Obj()
}

// CustomWorkload is a valid custom workload: a sweep of threads, a
// PostgreSQL client's results in the line format.
func CustomWorkload() benchv1.WorkloadSpec {
	return benchv1.WorkloadSpec{Image: "registry.example/bench:1", Custom: &benchv1.CustomWorkload{
		Command:       []string{"bench"},
		Args:          []string{"--threads={{threads}}"},
		Parameters:    []benchv1.CustomParameter{{Name: "threads", Values: []int32{8, 16}}},
		Format:        benchv1.CustomLines,
		PrimaryMetric: benchv1.CustomMetricKey{Name: "opsPerSecond"},
		Database:      benchv1.CustomPostgres,
	}}
}

// PoolPatch is a variant's patch that moves the load generators to pool.
func PoolPatch(pool string) *apiextensionsv1.JSON {
	return &apiextensionsv1.JSON{Raw: []byte(`{"workload":{"placement":{"nodeSelector":{"pool":"` + pool + `"}}}}`)}
}

// Comparison compares the pools standard-v3 (variant v3, the baseline)
// and standard-v4a (v4a) for a MeasureOnly run, reps runs of each in order,
// with a minimum effect of 2 %.
func Comparison(name string, order benchv1.ComparisonOrder, reps int32) *benchv1.BenchmarkComparison {
	return &benchv1.BenchmarkComparison{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: benchv1.BenchmarkComparisonSpec{
			Template: MeasureOnly("x", 20, 1).Spec,
			Variants: []benchv1.Variant{{Name: "v3", Patch: PoolPatch("standard-v3")}, {Name: "v4a", Patch: PoolPatch("standard-v4a")}},
			Baseline: "v3", Order: order, RunsPerVariant: reps,
			Criteria: benchv1.ComparisonCriteria{MinEffectPercent: ptr.To[benchv1.Percent](2)},
		},
	}
}

// TPSResult is a load generator's summary of pgbench's throughput v.
func TPSResult(v float64) string {
	res := results.New("pgbench")
	res.Primary = results.Key{Name: "transactionsPerSecond"}
	res.Add(results.Metric{Name: "transactionsPerSecond", Value: v, Unit: "tx/s", Direction: results.HigherIsBetter})
	msg, err := results.EncodeCompact(res, results.MaxCompactBytes)
	if err != nil {
		panic(err)
	}
	return string(msg)
}
