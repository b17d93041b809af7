package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// oneNodeStack is the simulated cluster of a story that needs one load
// generator node (pool loadgen, zone-a) and nothing else: the chart
// installed, the manager and the executor running the binaries given, a
// typed client, and namespace created. The stack stops with the test.
func oneNodeStack(ctx context.Context, t *testing.T, name, work string, logf *os.File, manager, runner, namespace string) (*sim.Stack, client.Client) {
	t.Helper()
	stack, err := sim.Up(ctx, sim.StackOptions{Name: fmt.Sprintf("%s-%d", name, os.Getpid()), Dir: work,
		BinDir: testutil.NeedEnv(t, "KUBEBUILDER_ASSETS"), Helm: testutil.NeedEnv(t, "HELM"),
		Chart: filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator"), Manager: manager, Runner: runner,
		Pools: []sim.Pool{{Name: "loadgen", Nodes: 1, InstanceType: "local", CPUModel: "local", Arch: "amd64", CPU: "2", Memory: "8Gi", Zones: []string{"zone-a"}, Kernel: "local", OSImage: "local"}},
		Log:   logf, Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stack.Stop)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = benchv1.AddToScheme(scheme)
	k, err := client.New(stack.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := stack.Kubectl(ctx, strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+namespace+"\n"), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return stack, k
}
