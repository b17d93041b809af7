package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// upgradeFrom is the build the upgrade test starts from: the last commit
// before the API grew spec.deadlines, status.message and status.deadline,
// and before the pod contract (internal/pod) was rewritten, so that the
// upgrade carries CRDs, a manager and a runner that all changed.
const upgradeFrom = "8cd87a15eea7f539469bd2f4b35743d9e3a87796"

// upgradeNS holds the upgrade test's runs.
const upgradeNS = "perf-upgrade"

// upgradeYAML: four runs and a two-variant comparison against a local
// redis-server, each measurement a few seconds, so that the upgrade
// falls in the middle of every one of them. Cleanup Never: the Jobs are
// counted afterwards.
const upgradeYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: up-%[2]d
  namespace: ` + upgradeNS + `
spec:
  repetitions: 4
  cleanup: Never
  allowSharedNodes: true
  target:
    external: {host: 127.0.0.1, port: %[1]d}
  workload:
    redisBenchmark: {tests: [set], requests: 60000, clients: [4], keySpace: 1000}
    placement: {nodeSelector: {pool: loadgen}}
`

const upgradeComparisonYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkComparison
metadata:
  name: up-cmp
  namespace: ` + upgradeNS + `
spec:
  baseline: a
  order: Interleaved
  runsPerVariant: 2
  template:
    repetitions: 1
    cleanup: Never
    allowSharedNodes: true
    target:
      external: {host: 127.0.0.1, port: %[1]d}
    workload:
      redisBenchmark: {tests: [set], requests: 60000, clients: [4], keySpace: 1000}
      placement: {nodeSelector: {pool: loadgen}}
  variants:
  - name: a
  - name: b
    patch: {workload: {redisBenchmark: {pipeline: [2]}}}
`

// buildAt builds the manager and the runner of commit in a worktree of
// this repository, and returns them with the worktree's chart.
func buildAt(t *testing.T, commit string) (manager, runner, chart string) {
	t.Helper()
	root := testutil.RepoRoot()
	if out, err := exec.Command("git", "-C", root, "cat-file", "-e", commit+"^{commit}").CombinedOutput(); err != nil {
		t.Skipf("commit %s is not in this clone (a shallow clone?): %v %s", commit, err, out)
	}
	dir := filepath.Join(t.TempDir(), "from")
	if out, err := exec.Command("git", "-C", root, "worktree", "add", "--detach", dir, commit).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("git", "-C", root, "worktree", "remove", "--force", dir).Run() })
	bins := filepath.Join(t.TempDir(), "bin")
	for _, c := range []struct{ pkg, out string }{{"./cmd/manager", "manager"}, {"./cmd/runner", "dbperf-runner"}} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bins, c.out), c.pkg)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s at %s: %v\n%s", c.pkg, commit, err, out)
		}
	}
	return filepath.Join(bins, "manager"), filepath.Join(bins, "dbperf-runner"), filepath.Join(dir, "charts", "dbperf-operator")
}

// TestChartUpgradeKeepsRunsInFlight: issue 26's upgrade. The chart, the
// manager and the runner of an earlier build are installed; runs and a
// comparison start; in the middle of their measurements the chart is
// upgraded to this build's (new CRD fields, a new pod contract) and the
// manager is replaced by this build's, as a Deployment's rollout would;
// the Jobs the old manager made run on with the old runner, the new ones
// with the new. Every run ends Succeeded with every measurement recorded
// once, in status and in its results document, one Job per measurement,
// and the comparison compares them all.
func TestChartUpgradeKeepsRunsInFlight(t *testing.T) {
	if os.Getenv("DBPERF_UPGRADE") == "" {
		t.Skip("make upgrade runs it (DBPERF_UPGRADE=1): it builds an older commit and takes two to four minutes, outside make test's budget")
	}
	binDir := testutil.NeedEnv(t, "KUBEBUILDER_ASSETS")
	helm := testutil.NeedEnv(t, "HELM")
	oldManager, oldRunner, oldChart := buildAt(t, upgradeFrom)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	redis := testutil.StartRedis(t)
	work, logf := workDir(t, "dbperf-e2e-upgrade-")
	bins := t.TempDir()
	newManager, newRunner := build(t, bins, "./cmd/manager", "manager"), build(t, bins, "./cmd/runner", "dbperf-runner")
	const oldImage, newImage = "ghcr.io/dbperf-io/dbperf-runner:upgrade-from", "ghcr.io/dbperf-io/dbperf-runner:upgrade-to"
	stack, err := sim.Up(ctx, sim.StackOptions{Name: fmt.Sprintf("e2e-upgrade-%d", os.Getpid()), Dir: work, BinDir: binDir, Helm: helm,
		Chart: oldChart, Manager: oldManager, Runner: newRunner, Runners: map[string]string{oldImage: oldRunner, newImage: newRunner},
		ManagerArgs: []string{"--runner-image=" + oldImage}, Log: logf, Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stack.Stop)
	c := stack.Cluster
	manifest := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + upgradeNS + "\n"
	for i := 1; i <= 4; i++ {
		manifest += "---" + fmt.Sprintf(upgradeYAML, redis.Port, i)
	}
	manifest += "---" + fmt.Sprintf(upgradeComparisonYAML, redis.Port)
	if out, err := c.Kubectl(ctx, strings.NewReader(manifest), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	dyn := dynamic.NewForConfigOrDie(c.Config)
	runs := []string{"up-1", "up-2", "up-3", "up-4"}

	// In the middle: every run has recorded a measurement, none all four.
	testutil.Eventually(t, 4*time.Minute, "every run in the middle of its measurements", func() error {
		for _, name := range runs {
			r, err := getRunIn(ctx, dyn, upgradeNS, name)
			if err != nil {
				return err
			}
			if n := recordedRepetitions(r); n < 1 || r.Status.Phase.Terminal() {
				return fmt.Errorf("%s: %d measurements, %s", name, n, r.Status.Phase)
			}
		}
		return nil
	})
	t.Log("upgrading the chart and replacing the manager")
	if _, err := c.HelmInstall(ctx, helm, filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator"), stack.Operator.Release, stack.Operator.Namespace); err != nil {
		t.Fatal(err)
	}
	if err := stack.ReplaceManager(ctx, newManager, "--runner-image="+newImage); err != nil {
		t.Fatal(err)
	}
	// The new CRD is the one served: spec.deadlines is known.
	if out, err := c.Kubectl(ctx, nil, "explain", "benchmarkrun.spec.deadlines"); err != nil || !strings.Contains(string(out), "podStart") {
		t.Fatalf("the upgraded CRD does not serve spec.deadlines: %v\n%s", err, out)
	}

	final := map[string]*benchv1.BenchmarkRun{}
	testutil.Eventually(t, 5*time.Minute, "every run and the comparison ended", func() error {
		if gone, err := stack.Manager.Exited(); gone {
			t.Fatalf("the new manager exited: %v", err)
		}
		for _, name := range runs {
			r, err := getRunIn(ctx, dyn, upgradeNS, name)
			if err != nil {
				return err
			}
			if !r.Status.Phase.Terminal() {
				return fmt.Errorf("%s is %s (%s)", name, r.Status.Phase, r.Status.Progress)
			}
			final[name] = r
		}
		cmp, err := dyn.Resource(cmpGVR).Namespace(upgradeNS).Get(ctx, "up-cmp", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if phase, _, _ := unstructured.NestedString(cmp.Object, "status", "phase"); phase != "Succeeded" && phase != "Failed" {
			return fmt.Errorf("the comparison is %s", phase)
		}
		return nil
	})
	jobs, err := c.Clientset.BatchV1().Jobs(upgradeNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jobsOf := map[string]int{}
	oldJobs, newJobs := 0, 0
	for _, j := range jobs.Items {
		for _, name := range runs {
			if strings.HasPrefix(j.Name, name+"-") {
				jobsOf[name]++
			}
		}
		for _, ic := range j.Spec.Template.Spec.InitContainers {
			switch ic.Image {
			case oldImage:
				oldJobs++
			case newImage:
				newJobs++
			}
		}
	}
	for _, name := range runs {
		r := final[name]
		if r.Status.Phase != benchv1.PhaseSucceeded {
			t.Errorf("%s ended %s: %s", name, r.Status.Phase, conditionsOf(r))
			continue
		}
		seen := map[int32]bool{}
		for _, rep := range r.Status.Steps[0].Repetitions {
			if seen[rep.Index] || rep.Verdict != benchv1.VerdictSucceeded {
				t.Errorf("%s: repetition %d recorded twice or not Succeeded: %+v", name, rep.Index, rep)
			}
			seen[rep.Index] = true
		}
		if len(seen) != 4 || jobsOf[name] != 4 {
			t.Errorf("%s: %d repetitions recorded, %d Jobs; want 4 and 4", name, len(seen), jobsOf[name])
		}
		cm, err := c.Clientset.CoreV1().ConfigMaps(upgradeNS).Get(ctx, specs.ResultsConfigMapName(r), metav1.GetOptions{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		doc, err := specs.ReadDocument(cm)
		if err != nil || doc == nil || len(doc.Steps) != 1 || len(doc.Steps[0].Repetitions) != 4 {
			t.Errorf("%s: the results document does not hold the 4 measurements: %v", name, err)
		}
	}
	if oldJobs == 0 || newJobs == 0 {
		t.Errorf("Jobs of the old runner %d, of the new %d: the upgrade did not fall in the middle", oldJobs, newJobs)
	}
	cmp, err := dyn.Resource(cmpGVR).Namespace(upgradeNS).Get(ctx, "up-cmp", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if phase, _, _ := unstructured.NestedString(cmp.Object, "status", "phase"); phase != "Succeeded" {
		t.Errorf("the comparison ended %s: %v", phase, cmp.Object["status"])
	}
	t.Logf("upgraded in flight: %d Jobs of the old runner, %d of the new; every run Succeeded with 4 measurements", oldJobs, newJobs)
}

func recordedRepetitions(r *benchv1.BenchmarkRun) int {
	n := 0
	for _, s := range r.Status.Steps {
		n += len(s.Repetitions)
	}
	return n
}
