package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// Limits the fuzz test holds every admitted object to.
const (
	// fuzzMaxStatusBytes bounds the JSON of an object's status: whatever
	// the spec and the tool's output, status stays small (the results
	// ConfigMap has the rest).
	fuzzMaxStatusBytes = 64 << 10
	// fuzzQuietWindow is how long a settled object is watched, and
	// fuzzMaxQuietWrites how often it may be written meanwhile (a hot
	// loop writes it many times a second).
	fuzzQuietWindow    = 4 * time.Second
	fuzzMaxQuietWrites = 2
)

// Random specs, applied to the real API server as a user's kubectl would
// send them (untyped JSON, so that wrong types reach the server): each one
// is refused with the path of a field, or admitted and then reconciled to a
// terminal phase or a waiting condition, with random outcomes of its Jobs
// (failed Jobs, garbage termination messages, summaries with extreme
// values, result blocks with thousands of reasons), without a panic of any
// reconciler, a reconcile error, a hot loop or a large status.
// DBPERF_FUZZ_SEED replays a seed, DBPERF_FUZZ_SPECS sets how many specs,
// DBPERF_FUZZ_LOG=1 logs every admitted spec.
func TestFuzzSpecsAgainstTheAPIServer(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("DBPERF_FUZZ_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("DBPERF_FUZZ_SEED: %v", err)
		}
	}
	amount, createFor := 150, 25*time.Second
	if s := os.Getenv("DBPERF_FUZZ_SPECS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("DBPERF_FUZZ_SPECS: %v", err)
		}
		amount, createFor = n, time.Hour
	}
	t.Logf("seed %d (replay with DBPERF_FUZZ_SEED=%d)", seed, seed)
	f := newSpecFuzzer(t, seed)
	h := newHarness(t)
	node := h.LoadgenNode()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	writes := watchWrites(t, ctx, h.NS)
	panicsBefore := kit.Counter(t, "controller_runtime_reconcile_panics_total")

	start := time.Now()
	var refused, admitted, runs, comparisons int
	for i := 0; i < amount && time.Since(start) < createFor; i++ {
		kind, spec := "BenchmarkRun", map[string]any(nil)
		if i%6 == 5 {
			kind, spec = "BenchmarkComparison", f.comparisonSpec()
		} else {
			spec = f.runSpec()
			if f.rnd.Intn(5) > 0 {
				spec["allowSharedNodes"] = true // most runs go past the queue
			}
		}
		obj, err := jsonObject(map[string]any{
			"apiVersion": benchv1.GroupVersion.String(), "kind": kind,
			"metadata": map[string]any{"name": f.name(i), "namespace": h.NS}, "spec": spec,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := k8s.Create(ctx, obj); err != nil {
			if !namesAField(err) {
				raw, _ := json.Marshal(spec)
				t.Errorf("%s %s refused without a field path: %v\nspec: %.2000s", kind, obj.GetName(), err, raw)
			}
			refused++
			continue
		}
		admitted++
		if os.Getenv("DBPERF_FUZZ_LOG") != "" {
			raw, _ := json.Marshal(spec)
			t.Logf("admitted %s %s: %s", kind, obj.GetName(), raw)
		}
		if kind == "BenchmarkRun" {
			runs++
		} else {
			comparisons++
		}
	}
	kl := &fuzzKubelet{h: h, f: f, seed: seed, node: node, seen: map[string]bool{}}
	kl.play(ctx, 12*time.Second)

	settled := waitSettled(t, h)
	windowStart := time.Now()
	errorsBefore := kit.Counter(t, "controller_runtime_reconcile_errors_total")
	time.Sleep(fuzzQuietWindow) // a window of observation, not a wait for an event
	errorsAfter := kit.Counter(t, "controller_runtime_reconcile_errors_total")
	for ctrl, n := range errorsAfter {
		if d := n - errorsBefore[ctrl]; d > 0 {
			t.Errorf("%s: %.0f reconcile errors in %s after every object settled", ctrl, d, fuzzQuietWindow)
		}
	}
	for key, n := range writes.since(windowStart) {
		if n > fuzzMaxQuietWrites {
			t.Errorf("%s written %d times in %s after it settled: a hot loop", key, n, fuzzQuietWindow)
		}
	}
	for ctrl, n := range kit.Counter(t, "controller_runtime_reconcile_panics_total") {
		if d := n - panicsBefore[ctrl]; d > 0 {
			t.Errorf("%s: %.0f reconcile panics (recovered by controller-runtime; the manager's log has the stack)", ctrl, d)
		}
	}
	t.Logf("seed %d: %d specs in %s: %d refused with a field path, %d admitted (%d runs, %d comparisons); "+
		"%d objects settled (%v); %d Jobs answered (%v)",
		seed, refused+admitted, time.Since(start).Round(time.Millisecond), refused, admitted, runs, comparisons,
		len(settled), phaseCounts(settled), kl.answered, kl.outcomes)
	if admitted == 0 || refused == 0 {
		t.Errorf("%d refused, %d admitted: the generator must make both", refused, admitted)
	}
}

func jsonObject(m map[string]any) (*unstructured.Unstructured, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(raw)
}

// namesAField says whether the API server's refusal names the field path
// of every cause: spec.… (or the spec itself, for a rule across fields)
// or metadata.name.
func namesAField(err error) bool {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) == 0 {
		return false
	}
	for _, c := range se.ErrStatus.Details.Causes {
		if strings.Contains(c.Message, "some validation rules were not checked") {
			continue // the API server's note beside the causes it found
		}
		if c.Field == "" || c.Field == "<nil>" { // an anyOf (int-or-string) cause names its path in its message
			if !strings.Contains(c.Message, `"spec.`) {
				return false
			}
			continue
		}
		if !strings.HasPrefix(c.Field, "spec") && !strings.HasPrefix(c.Field, "metadata.") {
			return false
		}
	}
	return true
}

// waitSettled waits until every run and comparison of the namespace is in
// a terminal phase or waits with a condition that says for what, and
// checks the size of their status.
func waitSettled(t *testing.T, h *harness) map[string]string {
	t.Helper()
	phases := map[string]string{}
	testutil.Eventually(t, 30*time.Second, "every admitted object settled", func() error {
		clear(phases)
		var runs benchv1.BenchmarkRunList
		if err := k8s.List(context.Background(), &runs, client.InNamespace(h.NS)); err != nil {
			return err
		}
		var notYet []string
		for i := range runs.Items {
			r := &runs.Items[i]
			if why := runUnsettled(r); why != "" {
				notYet = append(notYet, fmt.Sprintf("run %s: %s", r.Name, why))
			}
			phases["run/"+r.Name] = string(r.Status.Phase)
		}
		var cmps benchv1.BenchmarkComparisonList
		if err := k8s.List(context.Background(), &cmps, client.InNamespace(h.NS)); err != nil {
			return err
		}
		for i := range cmps.Items {
			c := &cmps.Items[i]
			cond := meta.FindStatusCondition(c.Status.Conditions, benchv1.ConditionCompared)
			if !c.Status.Phase.Terminal() && (cond == nil || cond.Reason != benchv1.ReasonRunning) {
				notYet = append(notYet, fmt.Sprintf("comparison %s: phase %q, condition %+v", c.Name, c.Status.Phase, cond))
			}
			phases["comparison/"+c.Name] = string(c.Status.Phase)
		}
		if len(notYet) > 0 {
			return fmt.Errorf("%d not settled: %s", len(notYet), strings.Join(notYet[:min(5, len(notYet))], "; "))
		}
		for i := range runs.Items {
			checkStatusSize(t, "run "+runs.Items[i].Name, runs.Items[i].Status)
		}
		for i := range cmps.Items {
			checkStatusSize(t, "comparison "+cmps.Items[i].Name, cmps.Items[i].Status)
		}
		return nil
	})
	return phases
}

// runUnsettled says why a run is neither terminal nor waiting with a
// condition that says for what; "" when it is.
func runUnsettled(r *benchv1.BenchmarkRun) string {
	waitingOn := map[benchv1.Phase][2]string{
		benchv1.PhaseQueued:       {benchv1.ConditionAdmitted, benchv1.ReasonWaitingForNodes},
		benchv1.PhaseProvisioning: {benchv1.ConditionTargetReady, ""},
		benchv1.PhasePreparing:    {benchv1.ConditionPrepared, benchv1.ReasonPreparing},
		benchv1.PhaseRunning:      {benchv1.ConditionCompleted, benchv1.ReasonMeasuring},
	}
	if r.Status.Phase.Terminal() {
		return ""
	}
	w, ok := waitingOn[r.Status.Phase]
	if !ok {
		return fmt.Sprintf("phase %q", r.Status.Phase)
	}
	c := meta.FindStatusCondition(r.Status.Conditions, w[0])
	if c == nil || c.Status != metav1.ConditionFalse || (w[1] != "" && c.Reason != w[1]) {
		return fmt.Sprintf("phase %s, condition %s %+v", r.Status.Phase, w[0], c)
	}
	return ""
}

func checkStatusSize(t *testing.T, what string, status any) {
	t.Helper()
	raw, err := json.Marshal(status)
	if err != nil || len(raw) > fuzzMaxStatusBytes {
		t.Errorf("%s: status of %d bytes (at most %d): %v", what, len(raw), fuzzMaxStatusBytes, err)
	}
}

func phaseCounts(phases map[string]string) map[string]int {
	out := map[string]int{}
	for k, p := range phases {
		out[strings.SplitN(k, "/", 2)[0]+":"+p]++
	}
	return out
}

// writeLog counts the writes of the namespace's runs and comparisons, from
// a watch of the API server.
type writeLog struct {
	mu sync.Mutex
	at map[string][]time.Time
}

func watchWrites(t *testing.T, ctx context.Context, ns string) *writeLog {
	t.Helper()
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	wl := &writeLog{at: map[string][]time.Time{}}
	for kind, list := range map[string]client.ObjectList{"run": &benchv1.BenchmarkRunList{}, "comparison": &benchv1.BenchmarkComparisonList{}} {
		w, err := wc.Watch(ctx, list, client.InNamespace(ns))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				if o, ok := ev.Object.(client.Object); ok && ev.Type == watch.Modified {
					wl.mu.Lock()
					wl.at[kind+"/"+o.GetName()] = append(wl.at[kind+"/"+o.GetName()], time.Now())
					wl.mu.Unlock()
				}
			}
		}()
	}
	return wl
}

func (wl *writeLog) since(from time.Time) map[string]int {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	out := map[string]int{}
	for k, ts := range wl.at {
		for _, at := range ts {
			if !at.Before(from) {
				out[k]++
			}
		}
	}
	return out
}

// fuzzKubelet answers the namespace's Jobs with random outcomes, each
// drawn from the seed and the Job's name alone, so that a seed replays the
// same answer to every Job whatever order the Jobs appear in.
type fuzzKubelet struct {
	h        *harness
	f        *specFuzzer
	seed     int64
	node     string
	seen     map[string]bool
	answered int
	outcomes map[string]int
}

func (k *fuzzKubelet) play(ctx context.Context, d time.Duration) {
	k.outcomes = map[string]int{}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		var jobs batchv1.JobList
		if err := k8s.List(ctx, &jobs, client.InNamespace(k.h.NS)); err != nil {
			k.h.T.Fatal(err)
		}
		fresh := 0
		for i := range jobs.Items {
			job := &jobs.Items[i]
			if k.seen[job.Name] {
				continue
			}
			k.seen[job.Name], fresh = true, fresh+1
			outcome := k.answer(ctx, job)
			k.outcomes[outcome]++
			if outcome != "left running" {
				k.answered++
			}
		}
		if fresh == 0 {
			time.Sleep(200 * time.Millisecond) // the kubelet's poll
		}
	}
}

// answer ends a Job's load generator in one of several ways, or leaves it
// running.
func (k *fuzzKubelet) answer(ctx context.Context, job *batchv1.Job) string {
	t := k.h.T
	name := fnv.New64a()
	_, _ = name.Write([]byte(job.Name))
	f := *k.f // the schemas and samples shared, a source of its own
	f.rnd = rand.New(rand.NewSource(k.seed ^ int64(name.Sum64())))
	n := f.rnd.Intn(6)
	if ptrValue(job.Spec.Completions) > 1 && n > 0 && n < 5 {
		n = 0 // a parallel Job's pods need the barrier: it fails instead
	}
	switch n {
	case 0:
		now := metav1.Now()
		job.Status.StartTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded", Message: f.str(40)},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded", Message: f.str(40)}}
		if err := k8s.Status().Update(ctx, job); err != nil {
			t.Errorf("failing job %s: %v", job.Name, err)
		}
		return "job failed"
	case 1:
		k.h.Terminate(job, k.node, int32(f.rnd.Intn(256)), f.str(f.rnd.Intn(4000)))
		return "garbage message"
	case 2:
		res := f.result(job.Labels[benchv1.LabelRole], 8, 3)
		msg, err := results.EncodeCompact(res, results.MaxCompactBytes)
		if err != nil {
			t.Fatal(err)
		}
		k.h.Terminate(job, k.node, 0, string(msg))
		return "summary"
	case 3, 4:
		res := f.result(job.Labels[benchv1.LabelRole], 300, 1000)
		block, err := results.EncodeBlock(res)
		if err != nil {
			t.Fatal(err)
		}
		k.h.Logs.Put(k.h.NS, job.Name+"-pod", append([]byte("tool output\n"), block...))
		k.h.Terminate(job, k.node, 0, `{"v":1,"tool":"x","verdict":"Succeeded"}`)
		return "result block"
	}
	return "left running"
}
