package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/comparison"
	"github.com/dbperf-io/dbperf-operator/controllers/schedule"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// envtest has no garbage collector: what a deleted parent still owns stays
// too. So the tests below read the owner references: a child released by
// deletionPolicy Retain no longer names its parent (the garbage collector
// would leave it), one of a parent deleted with Delete still does (the
// garbage collector would delete it).

func hasOwner(obj client.Object, uid types.UID) bool {
	return slices.ContainsFunc(obj.GetOwnerReferences(), func(ref metav1.OwnerReference) bool { return ref.UID == uid })
}

// waitGone waits until obj is deleted (its finalizer, if any, removed).
func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, obj.GetName()+" gone", func() error {
		cur := obj.DeepCopyObject().(client.Object)
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), cur)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there: deletion %v, finalizers %v", cur.GetDeletionTimestamp(), cur.GetFinalizers())
	})
}

// released checks that obj no longer names its parent and says which
// parent released it.
func released(t *testing.T, obj client.Object, parent types.UID, from string) {
	t.Helper()
	if hasOwner(obj, parent) {
		t.Errorf("%s still names its deleted parent: owner references %+v", obj.GetName(), obj.GetOwnerReferences())
	}
	if got := obj.GetAnnotations()[benchv1.AnnotationReleasedFrom]; got != from {
		t.Errorf("%s: annotation %s = %q, want %q", obj.GetName(), benchv1.AnnotationReleasedFrom, got, from)
	}
}

// releasedEvents counts the ResultsReleased events of the object (an event
// said again is one event of a higher count).
func releasedEvents(t *testing.T, ns, kind, name string) (n int32, messages []string) {
	t.Helper()
	var evs corev1.EventList
	if err := k8s.List(context.Background(), &evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name && e.Reason == benchv1.EventResultsReleased {
			n += max(e.Count, 1)
			messages = append(messages, e.Message)
		}
	}
	return n, messages
}

func waitReleasedEvent(t *testing.T, ns, kind, name, says string) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, "ResultsReleased event of "+kind+" "+name, func() error {
		n, msgs := releasedEvents(t, ns, kind, name)
		if n == 0 || !strings.Contains(strings.Join(msgs, "\n"), says) {
			return fmt.Errorf("%d events %q, want one saying %q", n, msgs, says)
		}
		return nil
	})
}

func comparisonRuns(t *testing.T, ns string, uid types.UID) []benchv1.BenchmarkRun {
	t.Helper()
	var runs benchv1.BenchmarkRunList
	if err := k8s.List(context.Background(), &runs, client.InNamespace(ns), client.MatchingLabels{benchv1.LabelComparison: string(uid)}); err != nil {
		t.Fatal(err)
	}
	return runs.Items
}

func get[T client.Object](t *testing.T, obj T) T {
	t.Helper()
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// A finished comparison deleted (as a GitOps tool prunes it) with the
// default deletionPolicy, Retain: its runs, their results ConfigMaps and
// its report stay, released and marked, still selected by the comparison's
// UID; events on the comparison and on each run say so.
func TestComparisonRetainKeepsRunsAndReport(t *testing.T) {
	h := newHarness(t)
	h.Create(kit.Comparison("keep", benchv1.OrderInterleaved, 1))
	h.PlayRuns("keep", 2, 1, kit.Measured)
	cmp := h.WaitComparison("keep", benchv1.ComparisonSucceeded)
	if cmp.Spec.DeletionPolicy != benchv1.DeletionRetain {
		t.Errorf("deletionPolicy %q, want the default Retain", cmp.Spec.DeletionPolicy)
	}
	if !controllerutil.ContainsFinalizer(cmp, benchv1.FinalizerReleaseResults) {
		t.Fatalf("finalizers %v, want %s", cmp.Finalizers, benchv1.FinalizerReleaseResults)
	}
	if err := k8s.Delete(context.Background(), cmp); err != nil {
		t.Fatal(err)
	}
	waitGone(t, cmp)

	runs := comparisonRuns(t, h.NS, cmp.UID)
	if len(runs) != 2 {
		t.Fatalf("%d runs left, want 2", len(runs))
	}
	for i := range runs {
		run := &runs[i]
		released(t, run, cmp.UID, "BenchmarkComparison/keep")
		if run.Labels[benchv1.LabelVariant] == "" {
			t.Errorf("run %s lost its labels: %v", run.Name, run.Labels)
		}
		// The run's own results stay the run's.
		cm := get(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: run.Status.ResultsConfigMap}})
		if !metav1.IsControlledBy(cm, run) {
			t.Errorf("results ConfigMap %s: owners %+v, want its run's", cm.Name, cm.OwnerReferences)
		}
		waitReleasedEvent(t, h.NS, "BenchmarkRun", run.Name, "BenchmarkComparison keep is being deleted with deletionPolicy Retain")
	}
	report := get(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: cmp.Status.ReportConfigMap}})
	released(t, report, cmp.UID, "BenchmarkComparison/keep")
	if report.Labels[benchv1.LabelComparison] != string(cmp.UID) || report.Data["report.md"] == "" {
		t.Errorf("report ConfigMap: labels %v, keys %v", report.Labels, kit.Keys(report.Data))
	}
	waitReleasedEvent(t, h.NS, "BenchmarkComparison", "keep", "released 2 BenchmarkRuns, 1 ConfigMap")
}

// A comparison deleted while its first run is measuring: the run is
// released and runs to completion; the comparison makes no further run.
func TestComparisonDeletedMidRunLetsTheRunFinish(t *testing.T) {
	h := newHarness(t)
	h.Node("v3-node", map[string]string{"pool": "standard-v3"})
	cmp := kit.Comparison("mid", benchv1.OrderInterleaved, 2)
	h.Create(cmp)
	first := comparison.RunName(cmp, "v3", 1)
	var run *benchv1.BenchmarkRun
	testutil.Eventually(t, 20*time.Second, "first run", func() error {
		run = &benchv1.BenchmarkRun{}
		return k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: first}, run)
	})
	job := h.WaitJob(specs.MeasureJobName(run, 0, 1))
	if err := k8s.Delete(context.Background(), cmp); err != nil {
		t.Fatal(err)
	}
	waitGone(t, cmp)
	released(t, h.Run(first), cmp.UID, "BenchmarkComparison/mid")
	waitReleasedEvent(t, h.NS, "BenchmarkRun", first, "runs to completion")
	waitReleasedEvent(t, h.NS, "BenchmarkComparison", "mid", "1 in progress run to completion")

	h.Terminate(job, "v3-node", 0, kit.Measured("v3", 0))
	h.WaitPhase(first, 20*time.Second, benchv1.PhaseSucceeded)
	if runs := comparisonRuns(t, h.NS, cmp.UID); len(runs) != 1 {
		t.Errorf("%d runs, want only the one in flight when the comparison was deleted", len(runs))
	}
}

// deletionPolicy Delete is the garbage collector's: no finalizer, the
// runs keep their owner reference (the collector deletes them).
func TestComparisonDeletePolicyLeavesRunsToTheGarbageCollector(t *testing.T) {
	h := newHarness(t)
	cmp := kit.Comparison("gc", benchv1.OrderInterleaved, 1)
	cmp.Spec.DeletionPolicy = benchv1.DeletionDelete
	h.Create(cmp)
	first := comparison.RunName(cmp, "v3", 1)
	testutil.Eventually(t, 20*time.Second, "first run", func() error {
		return k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: first}, &benchv1.BenchmarkRun{})
	})
	if cur := get(t, &benchv1.BenchmarkComparison{ObjectMeta: cmp.ObjectMeta}); len(cur.Finalizers) != 0 {
		t.Errorf("finalizers %v with deletionPolicy Delete", cur.Finalizers)
	}
	if err := k8s.Delete(context.Background(), cmp); err != nil {
		t.Fatal(err)
	}
	waitGone(t, cmp)
	run := h.Run(first)
	if !metav1.IsControlledBy(run, cmp) || run.Annotations[benchv1.AnnotationReleasedFrom] != "" {
		t.Errorf("run %s: owners %+v, annotations %v; want the comparison's, for the garbage collector", run.Name, run.OwnerReferences, run.Annotations)
	}
	if n, msgs := releasedEvents(t, h.NS, "BenchmarkComparison", "gc"); n != 0 {
		t.Errorf("ResultsReleased events %q with deletionPolicy Delete", msgs)
	}
}

// A schedule deleted with Retain releases its runs (one in flight) and
// its comparisons; a released comparison follows its own policy from then
// on (it takes its finalizer), its runs stay its own. With Delete, the
// schedule's runs keep their owner reference.
func TestScheduleRetainReleasesRunsAndComparisons(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	ctx := context.Background()
	shared := kit.MeasureOnly("x", 4, 1).Spec
	shared.AllowSharedNodes = true // both schedules' runs on the one node
	runs := &benchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec:       benchv1.BenchmarkScheduleSpec{RunOnCreate: true, RunTemplate: &benchv1.RunTemplate{Spec: shared}},
	}
	cmps := &benchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "pools"},
		Spec: benchv1.BenchmarkScheduleSpec{RunOnCreate: true,
			ComparisonTemplate: &benchv1.ComparisonTemplate{Spec: kit.Comparison("x", benchv1.OrderInterleaved, 1).Spec}},
	}
	gc := &benchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "gc"},
		Spec: benchv1.BenchmarkScheduleSpec{RunOnCreate: true, DeletionPolicy: benchv1.DeletionDelete,
			RunTemplate: &benchv1.RunTemplate{Spec: shared}},
	}
	for _, s := range []*benchv1.BenchmarkSchedule{runs, cmps, gc} {
		h.Create(s)
	}
	var run, gcRun benchv1.BenchmarkRun
	var cmp benchv1.BenchmarkComparison
	testutil.Eventually(t, 20*time.Second, "each schedule's first run", func() error {
		var list benchv1.BenchmarkComparisonList
		if err := k8s.List(ctx, &list, client.InNamespace(h.NS), client.MatchingLabels{benchv1.LabelSchedule: string(cmps.UID)}); err != nil {
			return err
		}
		rs, gs := h.ScheduleRuns(runs), h.ScheduleRuns(gc)
		if len(rs) != 1 || len(gs) != 1 || len(list.Items) != 1 {
			return fmt.Errorf("%d runs, %d runs, %d comparisons", len(rs), len(gs), len(list.Items))
		}
		run, gcRun, cmp = rs[0], gs[0], list.Items[0]
		return nil
	})
	for _, s := range []*benchv1.BenchmarkSchedule{runs, cmps} {
		if cur := get(t, &benchv1.BenchmarkSchedule{ObjectMeta: s.ObjectMeta}); !controllerutil.ContainsFinalizer(cur, benchv1.FinalizerReleaseResults) {
			t.Errorf("schedule %s: finalizers %v", s.Name, cur.Finalizers)
		}
	}
	// A comparison the schedule controls is the schedule's to delete (its
	// history limits): no finalizer of its own.
	if controllerutil.ContainsFinalizer(&cmp, benchv1.FinalizerReleaseResults) {
		t.Errorf("comparison %s controlled by a schedule has the finalizer", cmp.Name)
	}
	job := h.WaitJob(specs.MeasureJobName(&run, 0, 1))

	for _, s := range []*benchv1.BenchmarkSchedule{runs, cmps, gc} {
		if err := k8s.Delete(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*benchv1.BenchmarkSchedule{runs, cmps, gc} {
		waitGone(t, s)
	}
	released(t, h.Run(run.Name), runs.UID, "BenchmarkSchedule/nightly")
	if got := h.Run(run.Name).Labels[benchv1.LabelSchedule]; got != string(runs.UID) {
		t.Errorf("released run's label %s = %q, want the schedule's UID", benchv1.LabelSchedule, got)
	}
	waitReleasedEvent(t, h.NS, "BenchmarkSchedule", "nightly", "released 1 BenchmarkRun")
	waitReleasedEvent(t, h.NS, "BenchmarkSchedule", "pools", "released 1 BenchmarkComparison")
	h.Terminate(job, node, 0, kit.TPSResult(1000))
	h.WaitPhase(run.Name, 20*time.Second, benchv1.PhaseSucceeded)

	testutil.Eventually(t, 20*time.Second, "the released comparison taking its own finalizer", func() error {
		cur := get(t, &benchv1.BenchmarkComparison{ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: cmp.Name}})
		released(t, cur, cmps.UID, "BenchmarkSchedule/pools")
		if !controllerutil.ContainsFinalizer(cur, benchv1.FinalizerReleaseResults) {
			return fmt.Errorf("finalizers %v", cur.Finalizers)
		}
		return nil
	})
	for _, r := range comparisonRuns(t, h.NS, cmp.UID) {
		if !metav1.IsControlledBy(&r, &cmp) {
			t.Errorf("run %s of the released comparison: owners %+v", r.Name, r.OwnerReferences)
		}
	}

	if cur := h.Run(gcRun.Name); !hasOwner(cur, gc.UID) || cur.Annotations[benchv1.AnnotationReleasedFrom] != "" {
		t.Errorf("run %s of a schedule deleted with Delete: owners %+v, annotations %v", cur.Name, cur.OwnerReferences, cur.Annotations)
	}
}

// releaseConflicts refuses, once each, the first write releasing each
// child and the first removal of a parent's finalizer.
type releaseConflicts struct {
	ns      string
	mu      sync.Mutex
	refused map[string]bool
}

func (rc *releaseConflicts) wrap(c client.Client) client.Client {
	return kit.Intercept(c, interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		data, err := patch.Data(obj)
		if err != nil {
			return err
		}
		key := ""
		switch {
		case obj.GetNamespace() != rc.ns: // another test's
		case strings.Contains(string(data), benchv1.AnnotationReleasedFrom):
			key = fmt.Sprintf("%T/%s", obj, obj.GetName())
		case obj.GetDeletionTimestamp() != nil && !controllerutil.ContainsFinalizer(obj, benchv1.FinalizerReleaseResults):
			key = "finalizer/" + obj.GetName()
		}
		rc.mu.Lock()
		refuse := key != "" && !rc.refused[key]
		if refuse {
			rc.refused[key] = true
		}
		rc.mu.Unlock()
		if refuse {
			return kit.Conflict("benchmarkruns", obj.GetName())
		}
		return c.Patch(ctx, obj, patch, opts...)
	}})
}

// The release meets a conflict at every write (each run, the report, the
// finalizer's removal) and the comparison is deleted while no manager
// runs: the manager started afterwards releases everything, each child
// once (one event each), and the comparison goes.
func TestComparisonReleaseUnderConflictsAndRestart(t *testing.T) {
	h := newHarness(t)
	rc := &releaseConflicts{ns: h.NS, refused: map[string]bool{}}
	h.wrapParents = rc.wrap
	h.RestartManager(cfg)
	h.Create(kit.Comparison("again", benchv1.OrderInterleaved, 1))
	h.PlayRuns("again", 2, 1, kit.Measured)
	cmp := h.WaitComparison("again", benchv1.ComparisonSucceeded)

	h.StopManager()
	if err := k8s.Delete(context.Background(), cmp); err != nil {
		t.Fatal(err)
	}
	if cur := get(t, &benchv1.BenchmarkComparison{ObjectMeta: cmp.ObjectMeta}); cur.DeletionTimestamp == nil {
		t.Fatal("deleted without its finalizer")
	}
	h.StartManager(cfg)
	waitGone(t, cmp)

	runs := comparisonRuns(t, h.NS, cmp.UID)
	if len(runs) != 2 {
		t.Fatalf("%d runs left, want 2", len(runs))
	}
	for i := range runs {
		released(t, &runs[i], cmp.UID, "BenchmarkComparison/again")
		waitReleasedEvent(t, h.NS, "BenchmarkRun", runs[i].Name, "deletionPolicy Retain")
	}
	report := get(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: cmp.Status.ReportConfigMap}})
	released(t, report, cmp.UID, "BenchmarkComparison/again")
	rc.mu.Lock()
	refused := kit.Keys(rc.refused)
	rc.mu.Unlock()
	if len(refused) != 4 {
		t.Errorf("conflicts met at %v, want the two runs, the report and the finalizer", refused)
	}
	waitReleasedEvent(t, h.NS, "BenchmarkComparison", "again", "released 2 BenchmarkRuns, 1 ConfigMap")
	h.eventsWritten(t, &runs[0])
	if n, msgs := releasedEvents(t, h.NS, "BenchmarkComparison", "again"); n != 1 {
		t.Errorf("comparison: %d ResultsReleased events %q, want 1 (said by the pass that completed the release)", n, msgs)
	}
	for i := range runs {
		if n, msgs := releasedEvents(t, h.NS, "BenchmarkRun", runs[i].Name); n != 1 {
			t.Errorf("run %s: %d ResultsReleased events %q, want 1", runs[i].Name, n, msgs)
		}
	}
}

// The finalizer follows the policy: set to Delete, the comparison loses
// it; back to Retain, it takes it again.
func TestTheFinalizerFollowsThePolicy(t *testing.T) {
	h := newHarness(t)
	cmp := kit.Comparison("switch", benchv1.OrderInterleaved, 1)
	h.Create(cmp)
	finalizer := func(want bool) {
		t.Helper()
		testutil.Eventually(t, 10*time.Second, fmt.Sprintf("finalizer present: %v", want), func() error {
			cur := get(t, &benchv1.BenchmarkComparison{ObjectMeta: metav1.ObjectMeta{Namespace: h.NS, Name: "switch"}})
			if controllerutil.ContainsFinalizer(cur, benchv1.FinalizerReleaseResults) != want {
				return fmt.Errorf("finalizers %v", cur.Finalizers)
			}
			return nil
		})
	}
	setPolicy := func(p benchv1.DeletionPolicy) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"deletionPolicy":%q}}`, p)
		if err := k8s.Patch(context.Background(), cmp.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	finalizer(true)
	// deletionPolicy is the one field of a comparison's spec that changes.
	err := k8s.Patch(context.Background(), cmp.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"runsPerVariant":2}}`)))
	if err == nil || !strings.Contains(err.Error(), "spec is immutable but for deletionPolicy") {
		t.Errorf("runsPerVariant changed: %v", err)
	}
	setPolicy(benchv1.DeletionDelete)
	finalizer(false)
	setPolicy(benchv1.DeletionRetain)
	finalizer(true)
}

// What becomes of a comparison once deleted is no change of what it
// measures: a schedule's template hashes the same whatever its
// deletionPolicy (and as before the field existed).
func TestTheDeletionPolicyIsNoTemplateChange(t *testing.T) {
	s := &benchv1.BenchmarkSchedule{Spec: benchv1.BenchmarkScheduleSpec{
		ComparisonTemplate: &benchv1.ComparisonTemplate{Spec: kit.Comparison("x", benchv1.OrderInterleaved, 1).Spec}}}
	before := schedule.TemplateHash(s)
	for _, p := range []benchv1.DeletionPolicy{benchv1.DeletionRetain, benchv1.DeletionDelete} {
		s.Spec.ComparisonTemplate.Spec.DeletionPolicy = p
		if got := schedule.TemplateHash(s); got != before {
			t.Errorf("deletionPolicy %s: hash %s, want %s", p, got, before)
		}
	}
	s.Spec.ComparisonTemplate.Spec.RunsPerVariant = 7
	if schedule.TemplateHash(s) == before {
		t.Error("a change of what the template measures kept its hash")
	}
}

// The comparison's immutability rule names every field of its spec but
// deletionPolicy: a field added later is immutable too, or this fails.
func TestTheImmutabilityRuleNamesEveryOtherField(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "api", "v1alpha1", "benchmarkcomparison_types.go"))
	if err != nil {
		t.Fatal(err)
	}
	var rule string
	for _, line := range strings.Split(string(src), "\n") {
		if strings.Contains(line, "XValidation:rule=\"self.template == oldSelf.template") {
			rule = line
		}
	}
	if rule == "" {
		t.Fatal("no immutability rule on the comparison's spec")
	}
	st := reflect.TypeOf(benchv1.BenchmarkComparisonSpec{})
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if covered := strings.Contains(rule, "self."+name+" == oldSelf."+name); covered == (name == "deletionPolicy") {
			t.Errorf("spec.%s: in the immutability rule %v", name, covered)
		}
	}
}
