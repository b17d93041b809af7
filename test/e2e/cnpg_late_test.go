package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/executor"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

const lateNS = "perf-late"

// lateRunYAML is a short postgres run (pgbench's prepare step and one
// measurement) on a CloudNativePG Cluster the test plays.
const lateRunYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: %s
  namespace: ` + lateNS + `
spec:
  repetitions: 1
  target:
    postgres:
      instances: 1
      storage: {size: 1Gi}
    placement:
      nodeSelector: {pool: standard-v4a}
  workload:
    pgbench: {scale: 1, clients: [1], duration: 2s}
    placement:
      nodeSelector: {pool: loadgen}
`

// cnpgPollInterval is how often a run waiting on what it cannot watch
// looks again (controllers' pollInterval): what a missed event costs.
const cnpgPollInterval = 10 * time.Second

// cnpgTimes are the moments of a postgres run's way to Succeeded, from
// start: the CRDs installed (late) or the run created (first).
type cnpgTimes struct {
	start, created, healthy, provisioned, succeeded time.Time
}

func (c cnpgTimes) String() string {
	d := func(a, b time.Time) time.Duration { return b.Sub(a).Round(100 * time.Millisecond) }
	return fmt.Sprintf("Succeeded after %s (its Cluster created after %s; past Provisioning %s after the Cluster was healthy)",
		d(c.start, c.succeeded), d(c.start, c.created), d(c.healthy, c.provisioned))
}

// CloudNativePG's CRDs installed after the manager started work as if
// installed first: a postgres run waiting with CRDNotInstalled reaches
// Succeeded about as fast after the install as a run created with the CRDs
// there at the manager's start (the manager restarted), and both runs see
// their Cluster's health through the watch, not a poll.
func TestCNPGInstalledAfterOperator(t *testing.T) {
	binDir := testutil.NeedEnv(t, "KUBEBUILDER_ASSETS")
	helm := testutil.NeedEnv(t, "HELM")
	cnpgCRDs := testutil.NeedEnv(t, "CNPG_CRD_DIR")
	// Beside the retention story, once the package's other tests are done:
	// two small clusters at once keep make test within its budget.
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	work, logf := workDir(t, "dbperf-e2e-cnpg-late-")
	bins := t.TempDir()
	pg := testutil.StartPostgres(t)
	stack, err := sim.Up(ctx, sim.StackOptions{Name: fmt.Sprintf("e2e-cnpg-late-%d", os.Getpid()), Dir: work, BinDir: binDir, Helm: helm,
		Chart:   filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator"),
		Manager: build(t, bins, "./cmd/manager", "manager"), Runner: build(t, bins, "./cmd/runner", "dbperf-runner"),
		Log: logf, Progress: func(s string) { t.Log(s) }}) // no CNPGCRDs: installed below
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stack.Stop)
	c := stack.Cluster
	// The chart's ServiceAccount reads CRDs (to notice CloudNativePG's), and only reads them.
	for verb, want := range map[string]string{"watch": "yes", "list": "yes", "update": "no", "delete": "no"} {
		out, _ := c.Kubectl(ctx, nil, "auth", "can-i", verb, "customresourcedefinitions.apiextensions.k8s.io", "--as", stack.Operator.User())
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("can %s %s CRDs? %q, want %q", stack.Operator.User(), verb, got, want)
		}
	}
	dyn := dynamic.NewForConfigOrDie(c.Config)
	apply(ctx, t, c, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+lateNS+"\n"+"---"+fmt.Sprintf(lateRunYAML, "late"))
	testutil.Eventually(t, time.Minute, "late waiting with CRDNotInstalled", func() error {
		run, err := getRunIn(ctx, dyn, lateNS, "late")
		if err != nil {
			return err
		}
		if !strings.Contains(conditionsOf(run), "TargetReady=False/"+benchv1.ReasonCRDNotInstalled) {
			return fmt.Errorf("%s: %s", run.Status.Phase, conditionsOf(run))
		}
		return nil
	})

	t.Log("installing the CloudNativePG CRDs after the manager")
	if err := c.InstallCNPGCRDs(ctx, cnpgCRDs); err != nil {
		t.Fatal(err)
	}
	late := followCNPGRun(ctx, t, stack, dyn, "late", pg, time.Now())

	t.Log("restarting the manager: the CRDs are there at its start")
	holder, _ := stack.LeaseHolder(ctx)
	if err := stack.StopStartManager(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := stack.WaitForNewLeader(ctx, holder, time.Minute); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	apply(ctx, t, c, fmt.Sprintf(lateRunYAML, "first"))
	first := followCNPGRun(ctx, t, stack, dyn, "first", pg, start)

	t.Logf("CRDs installed after the manager: %s", late)
	t.Logf("CRDs installed first:             %s", first)
	checkAsFast(t, late, first)
}

// checkAsFast: the late install costs less than one look of a waiting run
// (cnpgPollInterval) over the first, in all; the Cluster comes within half
// a look of the install, and each run goes past Provisioning within half a
// look of its Cluster's health. The halves are generous for the events
// (about a second on a loaded 2-core machine) and what a poll would take on
// average.
func checkAsFast(t *testing.T, late, first cnpgTimes) {
	t.Helper()
	if slower := late.succeeded.Sub(late.start) - first.succeeded.Sub(first.start); slower > cnpgPollInterval {
		t.Errorf("the run waiting for the CRDs took %s longer than the one created with them: more than a poll interval (%s)", slower, cnpgPollInterval)
	}
	if d := late.created.Sub(late.start); d > cnpgPollInterval/2 {
		t.Errorf("the waiting run created its Cluster %s after the CRDs' install", d)
	}
	for name, times := range map[string]cnpgTimes{"late": late, "first": first} {
		if d := times.provisioned.Sub(times.healthy); d > cnpgPollInterval/2 {
			t.Errorf("%s went past Provisioning %s after its Cluster was healthy: its status not watched?", name, d)
		}
	}
}

// followCNPGRun plays CloudNativePG's part for the run's Cluster and
// records when the run gets past each step, until it Succeeded.
func followCNPGRun(ctx context.Context, t *testing.T, s *sim.Stack, dyn dynamic.Interface, name string, pg testutil.Postgres, start time.Time) cnpgTimes {
	t.Helper()
	times := cnpgTimes{start: start}
	testutil.Eventually(t, time.Minute, name+"'s Cluster", func() error {
		_, err := dyn.Resource(clusterGVR).Namespace(lateNS).Get(ctx, name+"-pg", metav1.GetOptions{})
		return err
	})
	times.created = time.Now()
	if err := executor.PlayCloudNativePG(ctx, s.Clientset, dyn, lateNS, name+"-pg", pg, t.Logf); err != nil {
		t.Fatalf("playing CloudNativePG for %s: %v", name, err)
	}
	times.healthy = time.Now()
	phaseBy := func(what string, within time.Duration, done func(benchv1.Phase) bool) time.Time {
		testutil.Eventually(t, within, name+" "+what, func() error {
			if gone, err := s.Manager.Exited(); gone {
				t.Fatalf("the manager exited: %v", err)
			}
			run, err := getRunIn(ctx, dyn, lateNS, name)
			if err != nil {
				return err
			}
			if run.Status.Phase.Terminal() && run.Status.Phase != benchv1.PhaseSucceeded {
				t.Fatalf("%s ended %s: %s", name, run.Status.Phase, conditionsOf(run))
			}
			if !done(run.Status.Phase) {
				return fmt.Errorf("%s: %s", run.Status.Phase, conditionsOf(run))
			}
			return nil
		})
		return time.Now()
	}
	times.provisioned = phaseBy("past Provisioning", time.Minute, func(p benchv1.Phase) bool {
		return p != "" && p != benchv1.PhasePending && p != benchv1.PhaseQueued && p != benchv1.PhaseProvisioning
	})
	times.succeeded = phaseBy("Succeeded", 2*time.Minute, func(p benchv1.Phase) bool { return p == benchv1.PhaseSucceeded })
	return times
}

func apply(ctx context.Context, t *testing.T, c *sim.Cluster, manifest string) {
	t.Helper()
	if out, err := c.Kubectl(ctx, strings.NewReader(manifest), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
