package controllers

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/targets"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// One API server (kube-apiserver and etcd built by hack/build-control-plane.sh)
// serves every test of the package; each test has its own namespace and its
// own manager, so a test can stop and restart the manager.
var (
	testEnv *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	scheme  = kruntime.NewScheme()
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(benchv1.AddToScheme(scheme))
}

// assets returns the control-plane binaries and CloudNativePG's CRDs, from
// the environment (make test sets them) or by running the hack scripts,
// which reuse their caches.
func assets() (bin, cnpg string, err error) {
	bin, cnpg = os.Getenv("KUBEBUILDER_ASSETS"), os.Getenv("CNPG_CRD_DIR")
	lastLine := func(script string) (string, error) {
		out, err := exec.Command("bash", filepath.Join(testutil.RepoRoot(), "hack", script)).Output()
		if err != nil {
			return "", fmt.Errorf("hack/%s: %w", script, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return lines[len(lines)-1], nil
	}
	if bin == "" {
		if bin, err = lastLine("build-control-plane.sh"); err != nil {
			return "", "", err
		}
	}
	if cnpg == "" {
		cnpg, err = lastLine("fetch-cnpg-crds.sh")
	}
	return bin, cnpg, err
}

func TestMain(m *testing.M) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapLevel())))
	bin, cnpg, err := assets()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testEnv = &envtest.Environment{
		BinaryAssetsDirectory: bin,
		CRDDirectoryPaths:     []string{filepath.Join(testutil.RepoRoot(), "config", "crd", "bases"), cnpg},
		ErrorIfCRDPathMissing: true,
	}
	if cfg, err = testEnv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		os.Exit(1)
	}
	k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	if err == nil {
		code := m.Run()
		_ = testEnv.Stop()
		os.Exit(code)
	}
	fmt.Fprintln(os.Stderr, err)
	_ = testEnv.Stop()
	os.Exit(1)
}

// logs is the kubelet's log store: what the runner printed, by pod.
type logs struct {
	mu    sync.Mutex
	byPod map[string][]byte
}

func (l *logs) TailLog(_ context.Context, ns, pod, _ string, _ int64) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.byPod[ns+"/"+pod]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("no log for %s/%s", ns, pod)
}

func (l *logs) put(ns, pod string, b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byPod == nil {
		l.byPod = map[string][]byte{}
	}
	l.byPod[ns+"/"+pod] = b
}

type harness struct {
	t      *testing.T
	ns     string
	logs   *logs
	stop   context.CancelFunc
	done   chan struct{}
	noLogs bool
	// wrap, when set, stands between the run reconciler and the API server
	// (to force write conflicts).
	wrap func(client.Client) client.Client
	// resources, when set, is the reconciler's resource telemetry.
	resources *Resources
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, logs: &logs{}}
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "t-"}}
	if err := k8s.Create(context.Background(), nsObj); err != nil {
		t.Fatal(err)
	}
	h.ns = nsObj.Name
	h.startManager(cfg)
	t.Cleanup(h.stopManager)
	// envtest has no namespace controller: delete the test's runs and
	// comparisons so that none of them holds nodes for the next test.
	t.Cleanup(func() {
		ctx := context.Background()
		_ = k8s.DeleteAllOf(ctx, &benchv1.BenchmarkComparison{}, client.InNamespace(h.ns))
		_ = k8s.DeleteAllOf(ctx, &benchv1.BenchmarkSchedule{}, client.InNamespace(h.ns))
		_ = k8s.DeleteAllOf(ctx, &benchv1.BenchmarkRun{}, client.InNamespace(h.ns))
	})
	return h
}

// startManager starts a manager with the reconciler as the binary wires it.
func (h *harness) startManager(c *rest.Config) {
	h.t.Helper()
	mgr, err := ctrl.NewManager(c, ctrl.Options{
		Scheme:     scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:      CacheOptions(),
		Client:     ClientOptions(),
	})
	if err != nil {
		h.t.Fatal(err)
	}
	owned, _, err := targets.ServedOwnedKinds(mgr.GetRESTMapper())
	if err != nil {
		h.t.Fatal(err)
	}
	var lr LogReader = h.logs
	if h.noLogs {
		lr = nil
	}
	rc := mgr.GetClient()
	if h.wrap != nil {
		rc = h.wrap(rc)
	}
	r := &BenchmarkRunReconciler{
		Client: rc, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorderFor("dbperf-operator"), Clock: clock.RealClock{},
		Logs: lr, RunnerImage: "ghcr.io/dbperf-io/dbperf-runner:test", KubernetesVersion: "v1.34.3",
		OperatorVersion: "test", Owned: owned, Resources: h.resources,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		h.t.Fatal(err)
	}
	cr := &BenchmarkComparisonReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("dbperf-operator")}
	if err := cr.SetupWithManager(mgr); err != nil {
		h.t.Fatal(err)
	}
	sr := &BenchmarkScheduleReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("dbperf-operator"), Clock: clock.RealClock{}}
	if err := sr.SetupWithManager(mgr); err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.stop, h.done = cancel, make(chan struct{})
	go func() {
		defer close(h.done)
		if err := mgr.Start(ctx); err != nil {
			h.t.Errorf("manager: %v", err)
		}
	}()
}

func (h *harness) stopManager() {
	if h.stop != nil {
		h.stop()
		<-h.done
		h.stop = nil
	}
}

// restartManager stops the manager and starts another, which must find
// what is in flight from the API server alone.
func (h *harness) restartManager(cfg *rest.Config) {
	h.stopManager()
	h.startManager(cfg)
}

// restartOnce restarts the manager the first time when holds: a restart
// between two looks of a test, at a moment it chooses.
func (h *harness) restartOnce(restarted *bool, when bool, cfg *rest.Config) {
	if !*restarted && when {
		*restarted = true
		h.restartManager(cfg)
	}
}

// allEnded says how many runs have not ended yet, for Eventually.
func allEnded(ended, runs int) error {
	if ended < runs {
		return fmt.Errorf("%d of %d runs ended", ended, runs)
	}
	return nil
}

func (h *harness) create(obj client.Object) {
	h.t.Helper()
	obj.SetNamespace(h.ns)
	if err := k8s.Create(context.Background(), obj); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) run(name string) *benchv1.BenchmarkRun {
	h.t.Helper()
	run := &benchv1.BenchmarkRun{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, run); err != nil {
		h.t.Fatal(err)
	}
	return run
}

func (h *harness) waitPhase(name string, within time.Duration, phases ...benchv1.Phase) *benchv1.BenchmarkRun {
	h.t.Helper()
	var run *benchv1.BenchmarkRun
	testutil.Eventually(h.t, within, "run "+name+" reaching "+fmt.Sprint(phases), func() error {
		run = h.run(name)
		for _, p := range phases {
			if run.Status.Phase == p {
				return nil
			}
		}
		return fmt.Errorf("phase %q, conditions %+v", run.Status.Phase, run.Status.Conditions)
	})
	return run
}

// waitCleanup waits until the run's cleanup policy has been carried out,
// whatever it keeps.
func (h *harness) waitCleanup(name string) {
	h.t.Helper()
	testutil.Eventually(h.t, 20*time.Second, "cleanup policy of "+name+" carried out", func() error {
		if run := h.run(name); !run.Status.CleanupCompleted {
			return fmt.Errorf("phase %s, cleanup not completed", run.Status.Phase)
		}
		return nil
	})
}

func (h *harness) waitJob(name string) *batchv1.Job {
	h.t.Helper()
	job := &batchv1.Job{}
	testutil.Eventually(h.t, 20*time.Second, "job "+name, func() error {
		return k8s.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, job)
	})
	return job
}

func (h *harness) jobs() []batchv1.Job {
	var jobs batchv1.JobList
	if err := k8s.List(context.Background(), &jobs, client.InNamespace(h.ns)); err != nil {
		h.t.Fatal(err)
	}
	return jobs.Items
}

// kubelet plays a node: it runs the real runner on a tool's recorded output
// (a fixture, printed by `cat`), then creates the Job's pod on a node and
// reports its container's termination with the message the runner wrote,
// and keeps the runner's log for the operator to read.
func (h *harness) kubelet(job *batchv1.Job, node, workload, fixture string) {
	h.t.Helper()
	res, msg := h.runTool(job.Name+"-pod", workload, runner.Options{
		Command: []string{"cat", fixture}, Prepare: job.Labels[benchv1.LabelRole] == benchv1.RolePrepare,
	})
	h.terminate(job, node, int32(runner.ExitCodeFor(res.Verdict)), msg)
}

// runTool runs a command through the runner as a workload pod's container
// would (o's Parser, SummaryFile and Stdout are the harness's) and keeps
// the runner's log as the pod's, before the caller reports the container
// ended: as on a node, the log exists first. It returns the result and the
// termination message.
func (h *harness) runTool(pod, workload string, o runner.Options) (*results.Result, string) {
	h.t.Helper()
	w, err := registry.ByName(workload)
	if err != nil {
		h.t.Fatal(err)
	}
	summary := filepath.Join(h.t.TempDir(), "termination-log")
	var out bytes.Buffer
	o.Parser, o.SummaryFile, o.Stdout = w, summary, &out
	res := runner.Exec(context.Background(), o)
	if err := runner.Finish(res, summary, &out); err != nil {
		h.t.Fatal(err)
	}
	msg, err := os.ReadFile(summary)
	if err != nil {
		h.t.Fatal(err)
	}
	h.logs.put(h.ns, pod, out.Bytes())
	return res, string(msg)
}

// terminate creates the Job's pod and reports its load generator as ended.
func (h *harness) terminate(job *batchv1.Job, node string, exit int32, message string) {
	h.t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: job.Name + "-pod", Namespace: h.ns, Labels: job.Spec.Template.Labels,
			Annotations: job.Spec.Template.Annotations,
		},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	pod.Spec.NodeName = node
	if err := k8s.Create(ctx, pod); err != nil {
		h.t.Fatal(err)
	}
	now := metav1.Now()
	pod.Status.Phase = corev1.PodSucceeded
	if exit != 0 {
		pod.Status.Phase = corev1.PodFailed
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: specs.LoadgenName, Image: pod.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exit, Message: message, StartedAt: now, FinishedAt: now, Reason: "Completed",
		}},
	}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) node(name string, labels map[string]string) {
	h.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := k8s.Create(context.Background(), n); err != nil && !strings.Contains(err.Error(), "already exists") {
		h.t.Fatal(err)
	}
}

func fixture(t *testing.T, tool, name string) string {
	return filepath.Join(testutil.FixturesDir(t, tool), name)
}

func zapLevel() zapcore.Level {
	if os.Getenv("DBPERF_TEST_VERBOSE") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "output.txt")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
