package topology

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/memtier"
)

// needMemtier puts the memtier_benchmark MEMTIER names (built by
// hack/build-tools.sh) on PATH.
func needMemtier(t *testing.T) {
	bin := testutil.NeedEnv(t, "MEMTIER")
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// runMemtier runs an invocation the operator built through the runner, its
// result file in a temporary directory, and fails the test unless it
// succeeded.
func runMemtier(t *testing.T, inv pod.Invocation, prepare bool) *results.Result {
	t.Helper()
	out := t.TempDir()
	var cmd, files []string
	for _, a := range inv.Command {
		cmd = append(cmd, strings.ReplaceAll(a, pod.OutputDir, out))
	}
	for _, f := range inv.ResultFiles {
		files = append(files, strings.Replace(f, pod.OutputDir, out, 1))
	}
	var stdout bytes.Buffer
	r := runner.Exec(context.Background(), runner.Options{Parser: memtier.Memtier{}, Prepare: prepare, Command: cmd, ResultFiles: files,
		Timeout: 2 * time.Minute, Stdout: &stdout})
	if r.Verdict != results.Succeeded {
		s := stdout.String()
		t.Fatalf("memtier %q: %s %v\n%s", cmd, r.Verdict, r.Reasons, s[max(0, len(s)-3000):])
	}
	return r
}

// asRun is what a comparison knows of one measurement of a memtier step:
// the run's status (its headline) and the full result.
func asRun(name string, spec *benchv1.WorkloadSpec, r *results.Result) compare.Run {
	var headline []benchv1.MetricValue
	for _, m := range r.Headline() {
		headline = append(headline, benchv1.MetricValue{Name: m.Name, Operation: m.Operation, Value: m.Value, Unit: m.Unit, Direction: m.Direction})
	}
	step := memtier.Memtier{}.Steps(spec)[0].Name
	return compare.Run{Name: name, Workload: "memtier", Spec: benchv1.BenchmarkRunSpec{Workload: *spec},
		Steps: []benchv1.StepStatus{{Name: step, Summary: []benchv1.MetricSummary{{Name: r.Primary.Name, Operation: r.Primary.Operation}},
			Repetitions: []benchv1.RepetitionStatus{{Index: 1, Verdict: benchv1.VerdictSucceeded, Metrics: headline}}}},
		Measurements: []compare.Measurement{{Step: step, Repetition: 1, Result: r}}}
}

// info reads one field of a section of INFO.
func info(t *testing.T, c *goredis.Client, section, field string) string {
	t.Helper()
	s, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

func client(addr string) *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
