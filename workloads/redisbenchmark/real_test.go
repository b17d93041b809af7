package redisbenchmark

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// The real redis-benchmark against a port nothing listens on says "Could
// not connect to Redis at …" and then waits forever: the line arms the
// runner's no-progress watchdog, which stops it, and the measurement fails
// saying why instead of holding the run until its timeout.
func TestRealUnreachableServerIsNamedAndStopped(t *testing.T) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		t.Skip("redis-benchmark is not installed (apt-get install redis-tools)")
	}
	spec := &benchv1.WorkloadSpec{RedisBenchmark: &benchv1.RedisBenchmarkWorkload{Tests: []string{"set"}, Requests: 1000, Clients: []int32{1}}}
	w := RedisBenchmark{}
	inv := w.Run(spec, pod.Endpoint{Host: "127.0.0.1", Port: int32(testutil.FreePort(t))}, w.Steps(spec)[0])
	var log bytes.Buffer
	start := time.Now()
	r := runner.Exec(context.Background(), runner.Options{Parser: w, Command: inv.Command, Stdout: &log, Timeout: time.Minute,
		Watchdog: runner.Watchdog{AfterFatal: time.Second}})
	took := time.Since(start)
	why := strings.Join(r.Reasons, "; ")
	if r.Verdict != results.Failed || !strings.Contains(why, "Could not connect to Redis at 127.0.0.1:") || !strings.Contains(why, "no progress for 1s") {
		t.Fatalf("%s: %s\n%s", r.Verdict, why, log.String())
	}
	if took > 20*time.Second {
		t.Fatalf("stopped after %s", took)
	}
}
