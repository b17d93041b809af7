// Package scale is the operator's scale benchmark on the local simulated
// cluster: 100 simulated nodes, hundreds to a thousand BenchmarkRuns at
// once, the workload pods completed by a stand-in kubelet of the test's own
// with a recorded tool output (a real redis-benchmark run through the real
// runner, recorded once at the start), so that the tools' own cost does not
// hide the operator's. What it measures comes from outside the manager: its
// RSS and CPU from /proc, its API writes from the API server's audit log,
// the latencies from watches of the runs and the times the kubelet wrote
// each pod's end.
//
// It is a benchmark, not a timed test: it runs only when DBPERF_SCALE_RUNS
// is set (make scale: 100,300,1000), prints the table of docs/reliability.md
// and fails only when a run does not end, a measurement is lost, or a goal
// of issue 17 is missed by far (see goals).
package scale

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/executor"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// auditPolicy records every write (not reads: they would cost the API
// server more than they tell) with its user, verb, resource and code.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  verbs: [get, list, watch]
- level: Metadata
`

func TestScale(t *testing.T) {
	// The test's own informers log through controller-runtime's logger;
	// without one, controller-runtime prints a goroutine dump in the table's
	// middle. Errors only: the table is what the output is for.
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	var sizes []int
	for _, f := range strings.Split(os.Getenv("DBPERF_SCALE_RUNS"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			sizes = append(sizes, n)
		}
	}
	if len(sizes) == 0 {
		t.Skip("a benchmark: set DBPERF_SCALE_RUNS=100,300,1000 (make scale)")
	}
	queued := envInt("DBPERF_SCALE_QUEUED", 1000)
	workers := os.Getenv("DBPERF_SCALE_WORKERS") // the manager's --max-concurrent-reconciles; default its own
	binDir := testutil.NeedEnv(t, "KUBEBUILDER_ASSETS")
	helm := testutil.NeedEnv(t, "HELM")
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Minute)
	defer cancel()

	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(work, "cluster.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	// DBPERF_SCALE_MANAGER measures another build (an earlier commit's) on
	// the same harness, for a side-by-side comparison.
	manager := os.Getenv("DBPERF_SCALE_MANAGER")
	if manager == "" {
		manager = filepath.Join(work, "manager")
		if out, err := exec.Command("go", "build", "-o", manager, "../../cmd/manager").CombinedOutput(); err != nil {
			t.Fatalf("building the manager: %v\n%s", err, out)
		}
	}
	rec := record(t)
	policy := filepath.Join(work, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Log("starting the simulated cluster with 100 nodes")
	c, err := sim.Start(ctx, sim.Options{Name: fmt.Sprintf("scale-%d", os.Getpid()), Dir: filepath.Join(work, "cluster"),
		BinDir: binDir, Log: logf, AuditPolicy: policy})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	node := func(name string, n int) sim.Pool {
		return sim.Pool{Name: name, Nodes: n, InstanceType: "standard-8", CPUModel: "sim", Arch: "amd64", CPU: "8", Memory: "32Gi",
			Zones: []string{"zone-a", "zone-b", "zone-c"}, Kernel: "sim", OSImage: "sim"}
	}
	if err := c.CreateNodes(ctx, []sim.Pool{node("bench", 99), node("queue", 1)}); err != nil {
		t.Fatal(err)
	}
	op, err := c.HelmInstall(ctx, helm, filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator"), "dbperf-operator", "dbperf-system")
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = benchv1.AddToScheme(scheme)
	cfg := *c.Config
	cfg.QPS, cfg.Burst = 200, 400
	k, err := client.New(&cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	kl := &replayKubelet{k: k, rec: rec, ended: map[string]time.Time{}, held: map[string]bool{}}
	srv, err := executor.ServeKubeletTLS(c.KubeletAddr(), kl.logs())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	informers, err := cache.New(&cfg, cache.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	// The informers stop before the cluster does (defers run last first),
	// or their watches fail against a stopped API server.
	ictx, stopInformers := context.WithCancel(ctx)
	defer stopInformers()
	w := &runWatch{seen: map[string]*runTimes{}}
	if err := kl.watch(ictx, informers); err != nil {
		t.Fatal(err)
	}
	if err := w.watch(ictx, informers); err != nil {
		t.Fatal(err)
	}
	go func() { _ = informers.Start(ictx) }()
	if !informers.WaitForCacheSync(ictx) {
		t.Fatal("informers did not sync")
	}

	// The builds measured side by side, each size in turn: this one with
	// each worker count of DBPERF_SCALE_WORKERS (default: the manager's
	// own), and DBPERF_SCALE_BEFORE's binary (an earlier commit's) first.
	var variants []variant
	if before := os.Getenv("DBPERF_SCALE_BEFORE"); before != "" {
		variants = append(variants, variant{label: "before", manager: before})
	}
	for _, wk := range strings.Split(workers, ",") {
		label := "this build"
		if wk != "" {
			label += ", " + wk + " workers"
		}
		variants = append(variants, variant{label: label, manager: manager, workers: wk})
	}
	env := &bench{t: t, ctx: ctx, c: c, k: k, op: op, work: work, kl: kl, w: w}
	var rows []row
	for _, n := range sizes {
		for _, v := range variants {
			env.use(v)
			r := env.concurrent(n)
			r.label = v.label
			rows = append(rows, r)
		}
	}
	var queues []queueRow
	for _, v := range variants {
		env.use(v)
		adm := env.admission(20)
		queues = append(queues, queueRow{label: v.label, admission: adm, alone: env.lastAlone, idle: env.idle(queued)})
	}
	t.Logf("\n%s", table(rows, queues, queued))
}

// variant is one manager build and worker count.
type variant struct {
	label, manager, workers string
}

func (b *bench) use(v variant) { b.manager, b.workers = v.manager, v.workers }

type queueRow struct {
	label            string
	admission, alone [2]time.Duration
	idle             float64
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// recorded is one real measurement's output: the runner's log (ending with
// the full result block) and its termination message.
type recorded struct {
	log, message []byte
}

// record runs redis-benchmark once, through the runner, against a local
// redis-server, with the very invocation the runs below get.
func record(t *testing.T) recorded {
	rd := testutil.StartRedis(t)
	w, err := registry.ByName("redis-benchmark")
	if err != nil {
		t.Fatal(err)
	}
	spec := &benchv1.WorkloadSpec{RedisBenchmark: &benchv1.RedisBenchmarkWorkload{Tests: []string{"get"}, Requests: 5000,
		Clients: []int32{4}, Pipeline: []int32{1}, KeySpace: 1000}}
	inv := w.Run(spec, pod.Endpoint{Host: "127.0.0.1", Port: int32(rd.Port)}, w.Steps(spec)[0])
	if inv.Command[0], err = localdb.Tool(inv.Command[0]); err != nil {
		t.Fatal(err)
	}
	summary := filepath.Join(t.TempDir(), "termination-log")
	var out bytes.Buffer
	res := runner.Exec(context.Background(), runner.Options{Parser: w, Command: inv.Command, SummaryFile: summary, Stdout: &out})
	if err := runner.Finish(res, summary, &out); err != nil {
		t.Fatal(err)
	}
	msg, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "Succeeded" {
		t.Fatalf("the recorded redis-benchmark run: %s %v", res.Verdict, res.Reasons)
	}
	return recorded{log: out.Bytes(), message: msg}
}

// replayKubelet stands for the kubelets of the simulated nodes for workload
// pods: once a pod is bound to a node, it reports its load generator ended
// with the recorded termination message, and serves the recorded log on
// the kubelet endpoint. Pods of held runs are left running.
type replayKubelet struct {
	k   client.Client
	rec recorded
	mu  sync.Mutex
	// ended: when the end of each run's last pod was written.
	ended map[string]time.Time
	held  map[string]bool
	queue chan client.ObjectKey
}

func (kl *replayKubelet) hold(run string, on bool) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	kl.held[run] = on
}

func (kl *replayKubelet) watch(ctx context.Context, informers cache.Cache) error {
	kl.queue = make(chan client.ObjectKey, 100000)
	inf, err := informers.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return err
	}
	offer := func(o any) {
		pod, ok := o.(*corev1.Pod)
		if !ok || pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			return
		}
		if r := pod.Labels[benchv1.LabelRole]; r != benchv1.RoleLoadgen && r != benchv1.RolePrepare {
			return
		}
		kl.queue <- client.ObjectKeyFromObject(pod)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: offer, UpdateFunc: func(_, n any) { offer(n) }})
	if err != nil {
		return err
	}
	for range 8 {
		go kl.work(ctx)
	}
	return nil
}

func (kl *replayKubelet) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case key := <-kl.queue:
			kl.end(ctx, key)
		}
	}
}

// end reports a pod's load generator ended, as a kubelet does.
func (kl *replayKubelet) end(ctx context.Context, key client.ObjectKey) {
	for range 5 {
		var pod corev1.Pod
		if err := kl.k.Get(ctx, key, &pod); err != nil {
			return
		}
		run := pod.Annotations[benchv1.AnnotationRunName]
		kl.mu.Lock()
		held := kl.held[run]
		kl.mu.Unlock()
		if held || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			return
		}
		now := metav1.Now()
		pod.Status.Phase = corev1.PodSucceeded
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted"}}
		pod.Status.StartTime = &now
		var statuses []corev1.ContainerStatus
		for _, ctr := range pod.Spec.Containers {
			statuses = append(statuses, corev1.ContainerStatus{Name: ctr.Name, Image: ctr.Image, ImageID: ctr.Image,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", Message: string(kl.rec.message), StartedAt: now, FinishedAt: now}}})
		}
		pod.Status.ContainerStatuses = statuses
		err := kl.k.Status().Update(ctx, &pod)
		if err == nil {
			if pod.Labels[benchv1.LabelRole] == benchv1.RoleLoadgen {
				kl.mu.Lock()
				kl.ended[pod.Namespace+"/"+run] = time.Now()
				kl.mu.Unlock()
			}
			return
		}
		if !apierrors.IsConflict(err) {
			return
		}
	}
}

func (kl *replayKubelet) endedAt(key string) (time.Time, bool) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	t, ok := kl.ended[key]
	return t, ok
}

func (kl *replayKubelet) logs() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/containerLogs/{ns}/{pod}/{container}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(kl.rec.log)
	})
	return mux
}

// runTimes are when the watch saw a run queued, admitted and ended.
type runTimes struct {
	created, queued, admitted, ended time.Time
	phase                            benchv1.Phase
	measurements                     int
}

type runWatch struct {
	mu   sync.Mutex
	seen map[string]*runTimes
}

func (w *runWatch) watch(ctx context.Context, informers cache.Cache) error {
	inf, err := informers.GetInformer(ctx, &benchv1.BenchmarkRun{})
	if err != nil {
		return err
	}
	note := func(o any) {
		run, ok := o.(*benchv1.BenchmarkRun)
		if !ok {
			return
		}
		now := time.Now()
		w.mu.Lock()
		defer w.mu.Unlock()
		key := run.Namespace + "/" + run.Name
		rt := w.seen[key]
		if rt == nil {
			rt = &runTimes{created: run.CreationTimestamp.Time}
			w.seen[key] = rt
		}
		p := run.Status.Phase
		rt.phase = p
		if p == benchv1.PhaseQueued && rt.queued.IsZero() {
			rt.queued = now
		}
		if !waitingPhase(p) && rt.admitted.IsZero() {
			rt.admitted = now
		}
		if p.Terminal() && rt.ended.IsZero() {
			rt.ended = now
			for _, s := range run.Status.Steps {
				rt.measurements += len(s.Repetitions)
			}
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: note, UpdateFunc: func(_, n any) { note(n) }})
	return err
}

func waitingPhase(p benchv1.Phase) bool {
	return p == "" || p == benchv1.PhasePending || p == benchv1.PhaseQueued
}

// of returns copies of the times of the runs of a namespace.
func (w *runWatch) of(ns string) map[string]runTimes {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]runTimes{}
	for k, v := range w.seen {
		if strings.HasPrefix(k, ns+"/") {
			out[k] = *v
		}
	}
	return out
}

type bench struct {
	t       *testing.T
	ctx     context.Context
	c       *sim.Cluster
	k       client.Client
	op      sim.Operator
	manager string
	work    string
	kl      *replayKubelet
	w       *runWatch
	workers string
	starts  int
	// lastAlone is the last admission part's pod end → terminal (p50, p99).
	lastAlone [2]time.Duration
}

// proc follows the manager process: peak RSS and CPU seconds.
type proc struct {
	m        *sim.ManagerProcess
	logPath  string
	cpu0     float64
	mu       sync.Mutex
	peakRSS  int64
	stopSamp context.CancelFunc
}

func (b *bench) startManager() *proc {
	b.starts++
	logPath := filepath.Join(b.work, fmt.Sprintf("manager-%d.log", b.starts))
	f, err := os.Create(logPath)
	if err != nil {
		b.t.Fatal(err)
	}
	args := []string{"--zap-log-level=info"}
	if b.workers != "" {
		args = append(args, "--max-concurrent-reconciles="+b.workers)
	}
	m, err := b.c.StartManager(b.ctx, b.manager, b.op, f, args...)
	if err != nil {
		b.t.Fatal(err)
	}
	p := &proc{m: m, logPath: logPath}
	// Led once the manager says so (the previous one released the lease).
	testutil.Eventually(b.t, time.Minute, "the manager leading", func() error {
		raw, _ := os.ReadFile(logPath)
		if !bytes.Contains(raw, []byte("successfully acquired lease")) {
			return fmt.Errorf("not leading yet")
		}
		return nil
	})
	time.Sleep(2 * time.Second) // its caches synced and idle
	p.cpu0 = cpuSeconds(b.t, m.Pid())
	sctx, cancel := context.WithCancel(b.ctx)
	p.stopSamp = cancel
	go func() {
		for {
			if rss := rssBytes(m.Pid()); rss > 0 {
				p.mu.Lock()
				p.peakRSS = max(p.peakRSS, rss)
				p.mu.Unlock()
			}
			select {
			case <-sctx.Done():
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	return p
}

// stop ends the manager cleanly and returns its CPU seconds since it led,
// its peak RSS and its reconcile errors.
func (p *proc) stop(t *testing.T) (cpu float64, rss int64, errs int) {
	cpu = cpuSeconds(t, p.m.Pid()) - p.cpu0
	p.stopSamp()
	p.m.Stop()
	p.mu.Lock()
	rss = p.peakRSS
	p.mu.Unlock()
	raw, _ := os.ReadFile(p.logPath)
	errs = bytes.Count(raw, []byte("Reconciler error"))
	return cpu, rss, errs
}

func cpuSeconds(t *testing.T, pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command's closing parenthesis: utime is the 12th, stime the 13th.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

func rssBytes(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func (b *bench) namespace(ns string) {
	if err := b.k.Create(b.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.t.Fatal(err)
	}
}

// dropNamespace deletes a namespace and waits until it is gone, so that its
// garbage collection does not load the API server during the next part.
func (b *bench) dropNamespace(ns string) {
	if err := b.k.Delete(b.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.t.Fatal(err)
	}
	testutil.Eventually(b.t, 10*time.Minute, "namespace "+ns+" gone", func() error {
		err := b.k.Get(b.ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%w)", err)
	})
}

func runObject(ns, name, pool string, shared bool) *benchv1.BenchmarkRun {
	return &benchv1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: benchv1.BenchmarkRunSpec{
			Repetitions:      1,
			AllowSharedNodes: shared,
			Target:           benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "127.0.0.1", Port: 6379}},
			Workload: benchv1.WorkloadSpec{
				RedisBenchmark: &benchv1.RedisBenchmarkWorkload{Tests: []string{"get"}, Requests: 5000, Clients: []int32{4},
					Pipeline: []int32{1}, KeySpace: 1000},
				Placement: benchv1.Placement{NodeSelector: map[string]string{sim.PoolLabel: pool}},
			},
		},
	}
}

// create makes the runs with 16 clients at once, as kubectl apply of a
// release's manifests or a schedule's burst would.
func (b *bench) create(runs []*benchv1.BenchmarkRun) {
	ch := make(chan *benchv1.BenchmarkRun)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range ch {
				if err := b.k.Create(b.ctx, r); err != nil {
					mu.Lock()
					first = cmpOr(first, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, r := range runs {
		ch <- r
	}
	close(ch)
	wg.Wait()
	if first != nil {
		b.t.Fatal(first)
	}
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// row is one line of the concurrent-runs table.
type row struct {
	label               string
	runs                int
	took                time.Duration
	cpu                 float64
	rss                 int64
	managerWrites       float64
	allWrites           float64
	events              float64
	byResource          string
	notFoundDeletes     int
	conflicts           int
	endToTerminal       [2]time.Duration // p50, p99
	createdToTerminal   [2]time.Duration
	reconcileErrors     int
	failed, unmeasured  int
	writesByActor       string
	missingPodEnd       int
	endToTerminalSample int
}

// concurrent creates n single-measurement runs at once and waits for all.
func (b *bench) concurrent(n int) row {
	t := b.t
	ns := fmt.Sprintf("scale-%d-%d", n, b.starts)
	b.namespace(ns)
	p := b.startManager()
	auditFrom := b.auditOffset()
	t.Logf("%d runs at once", n)
	runs := make([]*benchv1.BenchmarkRun, n)
	for i := range runs {
		runs[i] = runObject(ns, fmt.Sprintf("run-%04d", i), "bench", true)
	}
	began := time.Now()
	b.create(runs)
	testutil.Eventually(t, 30*time.Minute, fmt.Sprintf("%d runs ending", n), func() error {
		ended := 0
		for _, rt := range b.w.of(ns) {
			if !rt.ended.IsZero() {
				ended++
			}
		}
		if ended < n {
			return fmt.Errorf("%d of %d ended", ended, n)
		}
		return nil
	})
	took := time.Since(began)
	time.Sleep(3 * time.Second) // the cleanups after the terminal status
	r := row{runs: n, took: took}
	r.cpu, r.rss, r.reconcileErrors = p.stop(t)
	writes := b.audit(auditFrom, ns)
	r.managerWrites = float64(writes.by[b.op.User()]) / float64(n)
	r.allWrites = float64(writes.total) / float64(n)
	r.events = float64(writes.managerEvents) / float64(n)
	r.notFoundDeletes, r.conflicts = writes.notFoundDeletes, writes.managerConflicts
	r.byResource = writes.managerByResource(n)
	r.writesByActor = writes.actors(n)
	var endLat, createLat []time.Duration
	for key, rt := range b.w.of(ns) {
		if rt.phase != benchv1.PhaseSucceeded {
			r.failed++
		}
		if rt.measurements != 1 {
			r.unmeasured++
		}
		createLat = append(createLat, rt.ended.Sub(rt.created))
		if e, ok := b.kl.endedAt(key); ok {
			endLat = append(endLat, rt.ended.Sub(e))
		} else {
			r.missingPodEnd++
		}
	}
	r.endToTerminal = [2]time.Duration{quantile(endLat, 0.5), quantile(endLat, 0.99)}
	r.createdToTerminal = [2]time.Duration{quantile(createLat, 0.5), quantile(createLat, 0.99)}
	r.endToTerminalSample = len(endLat)
	t.Logf("%d runs: %s, %.1f runs/s; manager %.1f CPU s, peak RSS %.0f MiB; writes/run: manager %.1f (%s), all %.1f [%s]; 404 deletes %d, conflicts %d; last pod end → terminal p50 %s p99 %s; created → terminal p50 %s p99 %s; reconcile errors %d; not Succeeded %d, without their measurement %d",
		n, took.Round(time.Second), float64(n)/took.Seconds(), r.cpu, float64(r.rss)/(1<<20), r.managerWrites, r.byResource, r.allWrites, r.writesByActor,
		r.notFoundDeletes, r.conflicts, r.endToTerminal[0], r.endToTerminal[1], r.createdToTerminal[0], r.createdToTerminal[1], r.reconcileErrors, r.failed, r.unmeasured)
	if r.failed > 0 || r.unmeasured > 0 || r.missingPodEnd > 0 {
		t.Errorf("%d runs: %d not Succeeded, %d without exactly one measurement, %d without a pod's end", n, r.failed, r.unmeasured, r.missingPodEnd)
	}
	b.dropNamespace(ns)
	return r
}

// admission measures how long a queued run waits after the run it waits
// for has ended: k runs on the one node of pool "queue", which take it in
// turn.
func (b *bench) admission(k int) [2]time.Duration {
	t := b.t
	ns := fmt.Sprintf("scale-queue-%d", b.starts)
	b.namespace(ns)
	p := b.startManager()
	runs := make([]*benchv1.BenchmarkRun, k)
	for i := range runs {
		runs[i] = runObject(ns, fmt.Sprintf("queued-%03d", i), "queue", false)
	}
	b.create(runs)
	testutil.Eventually(t, 10*time.Minute, "the queued runs ending", func() error {
		ended := 0
		for _, rt := range b.w.of(ns) {
			if !rt.ended.IsZero() {
				ended++
			}
		}
		if ended < k {
			return fmt.Errorf("%d of %d ended", ended, k)
		}
		return nil
	})
	_, _, _ = p.stop(t)
	var order []runTimes
	for _, rt := range b.w.of(ns) {
		order = append(order, rt)
	}
	sort.Slice(order, func(i, j int) bool { return order[i].admitted.Before(order[j].admitted) })
	// One run at a time: its end to its terminal status with no other
	// run's work queued (the concurrent rows' figure includes the queue).
	var alone []time.Duration
	for key, rt := range b.w.of(ns) {
		if e, ok := b.kl.endedAt(key); ok {
			alone = append(alone, rt.ended.Sub(e))
		}
	}
	b.lastAlone = [2]time.Duration{quantile(alone, 0.5), quantile(alone, 0.99)}
	var lat []time.Duration
	for i := 1; i < len(order); i++ {
		if order[i].queued.IsZero() {
			continue // never waited
		}
		lat = append(lat, order[i].admitted.Sub(order[i-1].ended))
	}
	b.dropNamespace(ns)
	if len(lat) < k/2 {
		t.Errorf("only %d of %d runs on one node waited for another", len(lat), k)
	}
	out := [2]time.Duration{quantile(lat, 0.5), quantile(lat, 0.99)}
	t.Logf("admission after the blocker ended, %d runs in turn on one node: p50 %s p99 %s; a run alone, its pod's end → terminal: p50 %s p99 %s",
		len(lat), out[0], out[1], b.lastAlone[0], b.lastAlone[1])
	return out
}

// idle measures the manager's CPU while n runs wait, queued behind one
// whose load generator does not end.
func (b *bench) idle(n int) float64 {
	t := b.t
	ns := fmt.Sprintf("scale-idle-%d", b.starts)
	b.namespace(ns)
	p := b.startManager()
	b.kl.hold("blocker", true)
	b.create([]*benchv1.BenchmarkRun{runObject(ns, "blocker", "queue", false)})
	testutil.Eventually(t, 2*time.Minute, "the blocker running", func() error {
		if rt := b.w.of(ns)[ns+"/blocker"]; rt.phase != benchv1.PhaseRunning {
			return fmt.Errorf("phase %q", rt.phase)
		}
		return nil
	})
	runs := make([]*benchv1.BenchmarkRun, n)
	for i := range runs {
		runs[i] = runObject(ns, fmt.Sprintf("idle-%04d", i), "queue", false)
	}
	b.create(runs)
	testutil.Eventually(t, 10*time.Minute, "every run queued", func() error {
		q := 0
		for _, rt := range b.w.of(ns) {
			if rt.phase == benchv1.PhaseQueued {
				q++
			}
		}
		if q < n {
			return fmt.Errorf("%d of %d queued", q, n)
		}
		return nil
	})
	time.Sleep(10 * time.Second) // the last status writes settle
	// A whole period of the look each queued run takes every five minutes
	// (the safety net under the events, controllers' queueRecheck), so
	// that its cost is measured, not left out.
	const window = 5*time.Minute + 10*time.Second
	c0 := cpuSeconds(t, p.m.Pid())
	time.Sleep(window)
	share := (cpuSeconds(t, p.m.Pid()) - c0) / window.Seconds() * 100
	_, _, _ = p.stop(t)
	b.kl.hold("blocker", false)
	t.Logf("%d runs queued, nothing moving: the manager used %.2f %% of a core over %s", n, share, window)
	b.dropNamespace(ns)
	return share
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(q*float64(len(s)-1) + 0.5)
	return s[i]
}

// writes are the API writes the audit log recorded in one namespace.
type writes struct {
	total            int
	by               map[string]int
	managerRes       map[string]int
	managerEvents    int
	notFoundDeletes  int
	managerConflicts int
}

func (w writes) managerByResource(n int) string {
	var parts []string
	for k, v := range w.managerRes {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, float64(v)/float64(n)))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func (w writes) actors(n int) string {
	var parts []string
	for k, v := range w.by {
		parts = append(parts, fmt.Sprintf("%s %.1f", strings.TrimPrefix(k, "system:serviceaccount:"), float64(v)/float64(n)))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func (b *bench) auditOffset() int64 {
	fi, err := os.Stat(b.c.AuditLog())
	if err != nil {
		return 0
	}
	return fi.Size()
}

// audit counts the writes to one namespace since an offset of the audit
// log, by actor (the manager acts as the chart's ServiceAccount through
// impersonation).
func (b *bench) audit(from int64, ns string) writes {
	f, err := os.Open(b.c.AuditLog())
	if err != nil {
		b.t.Fatalf("the audit log: %v", err)
	}
	defer f.Close()
	if _, err := f.Seek(from, 0); err != nil {
		b.t.Fatal(err)
	}
	out := writes{by: map[string]int{}, managerRes: map[string]int{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e struct {
			Stage            string `json:"stage"`
			Verb             string `json:"verb"`
			User             struct{ Username string }
			ImpersonatedUser *struct{ Username string } `json:"impersonatedUser"`
			ObjectRef        *struct {
				Resource, Subresource, Namespace string
			} `json:"objectRef"`
			ResponseStatus *struct{ Code int } `json:"responseStatus"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Stage != "ResponseComplete" || e.ObjectRef == nil {
			continue
		}
		if e.ObjectRef.Namespace != ns || e.ObjectRef.Resource == "namespaces" {
			continue
		}
		actor := e.User.Username
		if e.ImpersonatedUser != nil {
			actor = e.ImpersonatedUser.Username
		}
		out.total++
		out.by[actor]++
		if actor != b.op.User() {
			continue
		}
		res := e.Verb + " " + e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		out.managerRes[res]++
		if e.ObjectRef.Resource == "events" {
			out.managerEvents++
		}
		code := 0
		if e.ResponseStatus != nil {
			code = e.ResponseStatus.Code
		}
		if e.Verb == "delete" && code == http.StatusNotFound {
			out.notFoundDeletes++
		}
		if code == http.StatusConflict {
			out.managerConflicts++
		}
	}
	return out
}

func table(rows []row, queues []queueRow, queued int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| runs at once | manager | took | runs/s | manager CPU s | manager peak RSS | manager writes/run (events) | all writes/run | last pod end → terminal p50 / p99 | created → terminal p50 / p99 | 404 deletes | 409 conflicts | reconcile errors |\n")
	fmt.Fprintf(&b, "|---:|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %d | %s | %s | %.1f | %.1f | %.0f MiB | %.1f (%.1f) | %.1f | %s / %s | %s / %s | %d | %d | %d |\n",
			r.runs, r.label, r.took.Round(time.Second), float64(r.runs)/r.took.Seconds(), r.cpu, float64(r.rss)/(1<<20), r.managerWrites, r.events,
			r.allWrites, r.endToTerminal[0].Round(time.Millisecond), r.endToTerminal[1].Round(time.Millisecond),
			r.createdToTerminal[0].Round(time.Second), r.createdToTerminal[1].Round(time.Second), r.notFoundDeletes, r.conflicts, r.reconcileErrors)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "\n%d runs, %s: the manager's writes per run: %s; every actor's: %s", r.runs, r.label, r.byResource, r.writesByActor)
	}
	fmt.Fprintf(&b, "\n\n| manager | queued run admitted after its blocker ended, p50 / p99 | one run at a time: last pod end → terminal p50 / p99 | %d queued runs, nothing moving: manager CPU |\n|---|---|---|---:|\n", queued)
	for _, q := range queues {
		fmt.Fprintf(&b, "| %s | %s / %s | %s / %s | %.2f %% of a core |\n", q.label, q.admission[0].Round(time.Millisecond), q.admission[1].Round(time.Millisecond),
			q.alone[0].Round(time.Millisecond), q.alone[1].Round(time.Millisecond), q.idle)
	}
	return b.String()
}
