package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/executor"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/sim"
)

// The chaos scenario: while runs with several steps and repetitions, a
// comparison and a schedule firing every minute are in flight, the manager
// is killed (SIGKILL) at random moments and started again; a load
// generator's runner and an external target's server are killed in the
// middle of a measurement. TestManyShortRunsKeepEveryMeasurement runs it on
// its cluster beside its few hundred runs; chaos_checks_test.go says what
// must hold afterwards.
//
// DBPERF_CHAOS_KILLS sets the number of kills (default 10; 50 in full) and
// DBPERF_CHAOS_SEED replays the random moments of a logged seed.

var scheduleGVR = schema.GroupVersionResource{Group: "bench.dbperf.io", Version: "v1alpha1", Resource: "benchmarkschedules"}

// chaosLeaseArgs: after a SIGKILL the next manager waits for the dead
// one's lease to expire (15 s by default); 6 s lets 50 kills fit in a few
// minutes. The renew deadline stays under the duration, as leader
// election requires; 5 s of it (3 s before) keeps a manager on a loaded
// CI machine from losing its lease by itself as often.
var chaosLeaseArgs = []string{"--leader-election-lease-duration=6s", "--leader-election-renew-deadline=5s", "--leader-election-retry-period=1s"}

const (
	chaosInFlight   = 10 // chaos runs kept in flight while kills remain
	chaosFirstRuns  = 12
	chaosSchedule   = "chaos-every-minute"
	chaosRunPrefix  = "chaos-"
	chaosKillPrefix = "chaos-kill-"
	chaosCmpPrefix  = "chaos-cmp-"
)

// chaosRunYAML: name, repetitions, cleanup policy, allowSharedNodes,
// target, load generators' pool.
const chaosRunYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: %s
spec:
  repetitions: %d
  cleanup: %s
  allowSharedNodes: %t
  target: %s
  workload:
    redisBenchmark: {tests: [get], requests: 3000, clients: [2, 4], pipeline: [1], keySpace: 1000}
    placement:
      nodeSelector: {pool: %s}
  telemetry: {pollInterval: 1s}
  validity: {maxLoadGeneratorCPUPercent: 100}
`

// chaosComparisonYAML: name, the rounds, a sequential stopping rule (or
// none) and the external server's port. Interleaved, so its runs follow
// one another through the kills. The variants patch the swept pipeline:
// their steps are paired by position (clients=2, pipeline=1 with
// clients=2,pipeline=2), or they would meet at no step.
const chaosComparisonYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkComparison
metadata:
  name: %s
spec:
  baseline: pipeline1
  stepPairing: ByPosition
  runsPerVariant: %d
%s  template:
    repetitions: 2
    allowSharedNodes: true
    target:
      external: {host: 127.0.0.1, port: %d}
    workload:
      redisBenchmark: {tests: [get], requests: 3000, clients: [2, 4], pipeline: [1], keySpace: 1000}
      placement:
        nodeSelector: {pool: loadgen}
    telemetry: {pollInterval: 1s}
    validity: {maxLoadGeneratorCPUPercent: 100}
  variants:
  - name: pipeline1
  - name: pipeline2
    patch: {workload: {redisBenchmark: {pipeline: [2]}}}
`

// chaosScheduleYAML: the external server's port. Every minute, and once at
// creation; Allow, so that no trigger is skipped because one is active.
const chaosScheduleYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkSchedule
metadata:
  name: ` + chaosSchedule + `
spec:
  schedule: "* * * * *"
  runOnCreate: true
  concurrencyPolicy: Allow
  successfulRunsHistoryLimit: 1000
  failedRunsHistoryLimit: 1000
  runTemplate:
    spec:
      repetitions: 2
      allowSharedNodes: true
      target:
        external: {host: 127.0.0.1, port: %d}
      workload:
        redisBenchmark: {tests: [get], requests: 3000, clients: [2, 4], pipeline: [1], keySpace: 1000}
        placement:
          nodeSelector: {pool: loadgen}
      telemetry: {pollInterval: 1s}
      validity: {maxLoadGeneratorCPUPercent: 100}
`

// chaosPool is where exclusive chaos runs (allowSharedNodes false) put
// their load generators: they queue for it one after another.
var chaosPool = sim.Pool{Name: "chaos", Nodes: 3, InstanceType: "local", CPUModel: "local", Arch: "amd64", CPU: "8", Memory: "32Gi",
	Zones: []string{"zone-a"}, Kernel: "local", OSImage: "local"}

func chaosKills() int {
	if v, err := strconv.Atoi(os.Getenv("DBPERF_CHAOS_KILLS")); err == nil && v >= 0 {
		return v
	}
	return 10
}

func chaosSeed() uint64 {
	if v, err := strconv.ParseUint(os.Getenv("DBPERF_CHAOS_SEED"), 10, 64); err == nil {
		return v
	}
	return uint64(time.Now().UnixNano())
}

// chaosRig drives the scenario on a stack.
type chaosRig struct {
	t     *testing.T
	e     *telemetryStack
	dyn   dynamic.Interface
	seed  uint64
	rng   *rand.Rand
	began time.Time

	mu       sync.Mutex
	created  int               // chaos-NNN runs created
	cmps     int               // comparisons created
	backends map[types.UID]int // a run with a target of its own → the port of the server playing it
	// figures of the kills
	kills, leaseLost int
	// restarting serializes the kill loop's restarts and the watchdog's,
	// and guards logMark: where the running manager's part of the
	// components' log begins.
	restarting sync.Mutex
	logMark    int64
	leaderless []time.Duration // from each kill to the next manager's lease
	atKills    map[string]int  // phase → kills at which some run was in it
	errs       []string        // what went wrong off the test's goroutine
	killed     []*benchv1.BenchmarkRun
}

func (r *chaosRig) errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// startChaos creates the schedule, a comparison and the first runs, and
// starts pointing the runs' own targets at local servers.
func startChaos(ctx context.Context, t *testing.T, e *telemetryStack, dyn dynamic.Interface) *chaosRig {
	t.Helper()
	seed := chaosSeed()
	t.Logf("chaos seed %d (DBPERF_CHAOS_SEED=%d replays the moments of the kills)", seed, seed)
	r := &chaosRig{t: t, e: e, dyn: dyn, seed: seed, rng: rand.New(rand.NewPCG(seed, seed)), began: time.Now(),
		backends: map[types.UID]int{}, atKills: map[string]int{}}
	if _, err := r.create(ctx, scheduleGVR, fmt.Sprintf(chaosScheduleYAML, e.port)); err != nil {
		t.Fatal(err)
	}
	if err := r.newComparison(ctx); err != nil {
		t.Fatal(err)
	}
	for range chaosFirstRuns {
		if err := r.newRun(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	go r.pointTargets(ctx)
	return r
}

func (r *chaosRig) create(ctx context.Context, gvr schema.GroupVersionResource, manifest string) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		return nil, err
	}
	out, err := r.dyn.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating %s %s: %w", gvr.Resource, obj.GetName(), err)
	}
	return out, nil
}

func (r *chaosRig) newComparison(ctx context.Context) error {
	r.mu.Lock()
	r.cmps++
	name := fmt.Sprintf("%s%d", chaosCmpPrefix, r.cmps)
	r.mu.Unlock()
	// Every other comparison, the first among them, stops early: it
	// looks after its second round of three, through the kills, and
	// stops there or runs on.
	rounds, sequential := 2, ""
	if r.cmps%2 == 1 {
		rounds, sequential = 3, "  sequential: {minRounds: 2, targetEffectPercent: 5}\n"
	}
	_, err := r.create(ctx, cmpGVR, fmt.Sprintf(chaosComparisonYAML, name, rounds, sequential, r.e.port))
	return err
}

// newRun creates the next chaos run. Kinds take turns: shared nodes and an
// external target; exclusive nodes (queued for pool chaos) unless
// exclusive ones already wait; a Valkey target of its own played by a
// local redis-server; and three repetitions. Cleanup policies take turns
// too (Always, OnSuccess, Never).
func (r *chaosRig) newRun(ctx context.Context, exclusiveActive int) error {
	r.mu.Lock()
	i := r.created
	r.created++
	r.mu.Unlock()
	name := fmt.Sprintf("%s%03d", chaosRunPrefix, i)
	cleanup := []string{"Always", "OnSuccess", "Never"}[i%3]
	external := fmt.Sprintf("{external: {host: 127.0.0.1, port: %d}}", r.e.port)
	kind := i % 4
	if kind == 1 && exclusiveActive >= 2 {
		kind = 0
	}
	var manifest string
	switch kind {
	case 0:
		manifest = fmt.Sprintf(chaosRunYAML, name, 2, cleanup, true, external, "loadgen")
	case 1:
		manifest = fmt.Sprintf(chaosRunYAML, name, 2, cleanup, false, external, chaosPool.Name)
	case 2:
		manifest = fmt.Sprintf(chaosRunYAML, name, 2, cleanup, true, "{valkey: {}, placement: {nodeSelector: {pool: loadgen}}}", "loadgen")
	default:
		manifest = fmt.Sprintf(chaosRunYAML, name, 3, cleanup, true, external, "loadgen")
	}
	if kind != 2 {
		_, err := r.create(ctx, runGVR, manifest)
		return err
	}
	// Its own server: the executor moves a target's server into the
	// target pod's cgroup, which two pods cannot share.
	server, err := localdb.StartRedis()
	if err != nil {
		return err
	}
	r.t.Cleanup(server.Stop)
	obj, err := r.create(ctx, runGVR, manifest)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.backends[obj.GetUID()] = server.Port
	r.mu.Unlock()
	return nil
}

// pointTargets plays the part of the targets' pods: every target Service
// of a chaos run gets the address of the local server standing for it,
// before any load generator connects (the target's pods start first).
func (r *chaosRig) pointTargets(ctx context.Context) {
	core := r.e.stack.Clientset.CoreV1()
	for ctx.Err() == nil {
		svcs, err := core.Services(ns).List(ctx, metav1.ListOptions{LabelSelector: benchv1.LabelRole + "=" + benchv1.RoleTarget})
		if err == nil {
			for _, svc := range svcs.Items {
				r.mu.Lock()
				port, ok := r.backends[types.UID(svc.Labels[benchv1.LabelRunUID])]
				r.mu.Unlock()
				if !ok || svc.Annotations[executor.BackendAnnotation] != "" {
					continue
				}
				patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"127.0.0.1:%d"}}}`, executor.BackendAnnotation, port)
				if _, err := core.Services(ns).Patch(ctx, svc.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil && ctx.Err() == nil {
					r.errorf("pointing Service %s at its server: %v", svc.Name, err)
				}
			}
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
}

// run kills the manager n times at random moments, 0.5–6 s after each new
// manager took the lease, keeping chaos runs and a comparison in flight
// until the last kill; the runner and server kills run beside it. It
// returns when all is done.
func (r *chaosRig) run(ctx context.Context, n int) {
	var wg sync.WaitGroup
	for _, kill := range []func(context.Context) (*benchv1.BenchmarkRun, error){r.killRunnerMidMeasurement, r.killServerMidMeasurement} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, err := kill(ctx)
			if err != nil {
				r.errorf("%v", err)
				return
			}
			r.mu.Lock()
			r.killed = append(r.killed, run)
			r.mu.Unlock()
		}()
	}
	r.killManager(ctx, n)
	wg.Wait()
}

// guard runs the watchdog until ctx ends (the test's cleanup), through
// the kills and the settling after them; the returned channel closes when
// it has stopped.
func (r *chaosRig) guard(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() { defer close(done); r.watchdog(ctx) }()
	return done
}

// watchdog starts another manager whenever the running one has exited by
// itself, for as long as the test runs, through the kills (the kill loop
// restarts the managers it kills) and the settling after them. On a loaded
// CI machine a manager may miss its renew deadline and stop leading
// ("leader election lost"); it releases the Lease as it goes, and nothing
// else would start the next one (CI once stalled for nine minutes with no
// manager at all).
func (r *chaosRig) watchdog(ctx context.Context) {
	s := r.e.stack
	for ctx.Err() == nil {
		sleepCtx(ctx, time.Second)
		r.restarting.Lock()
		if gone, exitErr := s.Manager.Exited(); gone && ctx.Err() == nil {
			r.exitedByItself(exitErr)
			r.t.Logf("the manager stopped leading by itself (%v): starting another", exitErr)
			if err := r.restart(ctx); err != nil && ctx.Err() == nil {
				r.errorf("restarting the manager: %v", err)
			}
		}
		r.restarting.Unlock()
	}
}

// exitedByItself judges a manager that ended without a kill: only losing
// the lease (its renewal slower than the renew deadline on a loaded
// machine) may end one, said in what the log gained since it started.
// Called with restarting held.
func (r *chaosRig) exitedByItself(exitErr error) {
	if !strings.Contains(since(r.e.stack.Dir()+"/components.log", r.logMark), "leader election lost") {
		r.errorf("the manager exited by itself: %v", exitErr)
	}
	r.mu.Lock()
	r.leaseLost++
	r.mu.Unlock()
}

// restart starts the next manager and marks where its log begins. Called
// with restarting held.
func (r *chaosRig) restart(ctx context.Context) error {
	path := r.e.stack.Dir() + "/components.log"
	if fi, err := os.Stat(path); err == nil {
		r.logMark = fi.Size()
	}
	return r.e.stack.RestartManager(ctx)
}

func (r *chaosRig) killManager(ctx context.Context, n int) {
	s := r.e.stack
	leader, err := s.WaitForNewLeader(ctx, "", 2*time.Minute)
	if err != nil {
		r.errorf("the first manager: %v", err)
		return
	}
	ledAt := time.Now()
	for r.kills < n && ctx.Err() == nil {
		delay := 500*time.Millisecond + time.Duration(r.rng.Float64()*float64(5500*time.Millisecond))
		sleepCtx(ctx, time.Until(ledAt.Add(delay)))
		killedAt := time.Now()
		r.restarting.Lock()
		gone, exitErr := s.Manager.Exited()
		if gone {
			r.exitedByItself(exitErr)
		}
		err := r.restart(ctx)
		r.restarting.Unlock()
		if err != nil {
			r.errorf("restarting the manager: %v", err)
			return
		}
		if !gone {
			r.kills++
			// Nothing changes status until the next manager leads, a
			// lease duration from now at the earliest: this is where
			// everything was at the kill.
			line, phases := r.snapshot(ctx)
			for p := range phases {
				r.atKills[p]++
			}
			r.t.Logf("kill %d/%d at +%s, %.1f s after the manager took the lease: %s", r.kills, n,
				killedAt.Sub(r.began).Round(time.Second), killedAt.Sub(ledAt).Seconds(), line)
		}
		// While the next manager waits for the lease: new runs, which it
		// finds unstarted.
		if err := r.topUp(ctx, n); err != nil {
			r.errorf("keeping runs in flight: %v", err)
		}
		if leader, err = s.WaitForNewLeader(ctx, leader, 2*time.Minute); err != nil {
			r.errorf("after kill %d: %v", r.kills, err)
			return
		}
		ledAt = time.Now()
		r.leaderless = append(r.leaderless, ledAt.Sub(killedAt))
	}
}

// topUp adds a chaos run, and more until chaosInFlight are in flight, and
// a comparison when none is.
func (r *chaosRig) topUp(ctx context.Context, n int) error {
	runs, err := listRuns(ctx, r.dyn)
	if err != nil {
		return err
	}
	active, exclusive := 0, 0
	for _, run := range runs {
		if isChaosRun(run.Name) && !run.Status.Phase.Terminal() {
			active++
			if !run.Spec.AllowSharedNodes {
				exclusive++
			}
		}
	}
	// At least one new run each time, so that kills also land while runs
	// are admitted, queued and started.
	for made := 0; made == 0 || active < chaosInFlight; made++ {
		if err := r.newRun(ctx, exclusive); err != nil {
			return err
		}
		active++
	}
	if r.kills >= n-1 {
		return nil
	}
	cmps, err := listComparisons(ctx, r.dyn)
	if err != nil {
		return err
	}
	for _, c := range cmps {
		if !c.Status.Phase.Terminal() {
			return nil
		}
	}
	return r.newComparison(ctx)
}

// isChaosRun: the runs the rig creates itself (not the kill cases', the
// comparisons' or the schedule's).
func isChaosRun(name string) bool {
	rest, ok := strings.CutPrefix(name, chaosRunPrefix)
	_, err := strconv.Atoi(rest)
	return ok && err == nil
}

// snapshot says where everything is at a kill, and which phases runs and
// comparisons were in.
func (r *chaosRig) snapshot(ctx context.Context) (string, map[string]bool) {
	phases := map[string]bool{}
	runs, err := listRuns(ctx, r.dyn)
	if err != nil {
		return err.Error(), phases
	}
	chaos, many := map[benchv1.Phase]int{}, map[benchv1.Phase]int{}
	for _, run := range runs {
		p := run.Status.Phase
		if p == "" {
			p = "(none)"
		}
		phases["run "+string(p)] = true
		if strings.HasPrefix(run.Name, "many-") {
			many[p]++
		} else {
			chaos[p]++
		}
	}
	var cmps []string
	if list, err := listComparisons(ctx, r.dyn); err == nil {
		for _, c := range list {
			phases["comparison "+string(c.Status.Phase)] = true
			if !c.Status.Phase.Terminal() {
				cmps = append(cmps, fmt.Sprintf("%s %s %s", c.Name, c.Status.Phase, c.Status.Progress))
			}
		}
	}
	active := "?"
	if s, err := getSchedule(ctx, r.dyn, chaosSchedule); err == nil {
		active = strconv.Itoa(len(s.Status.Active))
	}
	return fmt.Sprintf("chaos runs %s; many runs %s; comparisons in flight [%s]; schedule's active runs %s",
		phaseCounts(chaos), phaseCounts(many), strings.Join(cmps, ", "), active), phases
}
