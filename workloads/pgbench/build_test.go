package pgbench

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// A capacity level's rate is pgbench's --rate, split among the Job's load
// generators when it has several; the latency limit is --latency-limit.
func TestRunOffersTheLevelsRate(t *testing.T) {
	spec := &benchv1.WorkloadSpec{Pgbench: &benchv1.PgbenchWorkload{Clients: []int32{10}, Duration: metav1.Duration{Duration: 5 * time.Second},
		LatencyLimit: &metav1.Duration{Duration: 12500 * time.Microsecond}}}
	step := workloads.Step{Name: "rate=1600", Params: map[string]int32{"rate": 1600}}
	args := func() string { return strings.Join(Pgbench{}.Run(spec, pod.Endpoint{}, step).Command, " ") }
	if got := args(); !strings.Contains(got, "--client 10 ") || !strings.Contains(got, "--rate 1600") || !strings.Contains(got, "--latency-limit 12.5") {
		t.Fatalf("%s", got)
	}
	spec.Parallelism = 3
	if got := (Pgbench{}).Run(spec, pod.Endpoint{}, step).Command; !slices.Contains(got, workloads.SharePlaceholder(1600)) {
		t.Fatalf("three generators must split the rate: %q", got)
	}
	r := int32(300)
	spec.Pgbench.RateLimitPerSecond = &r
	if got := (Pgbench{}).Run(spec, pod.Endpoint{}, workloads.Step{Name: "clients=10", Params: map[string]int32{"clients": 10}}).Command; !slices.Contains(got, workloads.SharePlaceholder(300)) {
		t.Fatalf("rateLimitPerSecond is the measurement's, split too: %q", got)
	}
}
