// Package e2e runs the operator end to end on the local simulated cluster:
// the Helm chart installed with helm, the manager as a local process acting
// as the chart's ServiceAccount (so a missing RBAC rule fails the test),
// BenchmarkRuns applied with kubectl, their Jobs scheduled by the real
// scheduler onto simulated node pools, and their pods run by the test
// executor with the real pgbench and redis-benchmark against local
// PostgreSQL and redis-server.
//
// It needs KUBEBUILDER_ASSETS (control plane with kwokctl), HELM and
// CNPG_CRD_DIR, which hack/test.sh sets; without them it skips.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/executor"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

var (
	runGVR     = schema.GroupVersionResource{Group: "bench.dbperf.io", Version: "v1alpha1", Resource: "benchmarkruns"}
	clusterGVR = executor.ClusterGVR
)

const ns = "perf"

// workDir makes a test's work directory (cluster logs, each pod's log and
// termination message) and the components' log in it; both are kept, and
// the log's end shown, when the test fails.
func workDir(t *testing.T, prefix string) (string, *os.File) {
	t.Helper()
	work, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(work, 0o755); err != nil { // pods run as their runAsUser
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kept the work directory for inspection: %s", work)
			return
		}
		_ = os.RemoveAll(work)
	})
	logf, err := os.Create(filepath.Join(work, "components.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			raw, _ := os.ReadFile(logf.Name())
			if len(raw) > 30000 {
				raw = raw[len(raw)-30000:]
			}
			t.Logf("manager and executor log (end):\n%s", raw)
		}
	})
	return work, logf
}

// build compiles one of the project's commands into dir.
func build(t *testing.T, dir, pkg, name string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = testutil.RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// getRun reads a run of the namespace ns.
func getRun(ctx context.Context, dyn dynamic.Interface, name string) (*benchv1.BenchmarkRun, error) {
	return getRunIn(ctx, dyn, ns, name)
}

// getRunIn reads a run through the dynamic client, as kubectl would.
func getRunIn(ctx context.Context, dyn dynamic.Interface, namespace, name string) (*benchv1.BenchmarkRun, error) {
	u, err := dyn.Resource(runGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	raw, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	run := &benchv1.BenchmarkRun{}
	return run, json.Unmarshal(raw, run)
}

// conditionsOf is a run's conditions on one line.
func conditionsOf(run *benchv1.BenchmarkRun) string {
	var parts []string
	for _, c := range run.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s/%s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(parts, "; ")
}

// mustJSON is v as JSON, for messages.
func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
