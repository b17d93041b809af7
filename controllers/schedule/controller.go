package schedule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/metrics"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/retention"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/status"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// Reconciler starts runs on a cron and on template changes
// and watches their results for regressions.
type Reconciler struct {
	client.Client
	// APIReader, when set, lists the runs and comparisons a schedule
	// releases as it is deleted past the cache (which may not have seen one
	// just created); without it the client's cache is read.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
}

// +kubebuilder:rbac:groups=bench.dbperf.io,resources=benchmarkschedules,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=bench.dbperf.io,resources=benchmarkschedules/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=bench.dbperf.io,resources=benchmarkschedules/finalizers,verbs=update
// +kubebuilder:rbac:groups=bench.dbperf.io,resources=benchmarkruns,verbs=list;create;patch;delete
// +kubebuilder:rbac:groups=bench.dbperf.io,resources=benchmarkcomparisons,verbs=list;create;patch;delete

// TemplateHash identifies the schedule's template: a change of it is a new
// release to measure.
func TemplateHash(s *benchv1.BenchmarkSchedule) string {
	var raw []byte
	if s.Spec.ComparisonTemplate != nil {
		// What becomes of a comparison once deleted is no change of what
		// it measures (and a template stored before the field existed
		// hashes as it did).
		t := s.Spec.ComparisonTemplate.DeepCopy()
		t.Spec.DeletionPolicy = ""
		raw, _ = json.Marshal(t)
	} else {
		raw, _ = json.Marshal(s.Spec.RunTemplate)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])[:12]
}

// scheduled is a run or comparison a schedule created.
type scheduled struct {
	obj      client.Object
	phase    benchv1.Phase
	fromRun  *benchv1.BenchmarkRun
	fromComp *benchv1.BenchmarkComparison
}

func (r *Reconciler) owned(ctx context.Context, s *benchv1.BenchmarkSchedule) ([]scheduled, error) {
	sel := client.MatchingLabels{benchv1.LabelSchedule: string(s.UID)}
	var out []scheduled
	var runs benchv1.BenchmarkRunList
	if err := r.List(ctx, &runs, client.InNamespace(s.Namespace), sel); err != nil {
		return nil, err
	}
	for i := range runs.Items {
		x := &runs.Items[i]
		out = append(out, scheduled{obj: x, phase: x.Status.Phase, fromRun: x})
	}
	var cmps benchv1.BenchmarkComparisonList
	if err := r.List(ctx, &cmps, client.InNamespace(s.Namespace), sel); err != nil {
		return nil, err
	}
	for i := range cmps.Items {
		x := &cmps.Items[i]
		// A comparison's phases are a subset of a run's: one history.
		out = append(out, scheduled{obj: x, phase: benchv1.Phase(x.Status.Phase), fromComp: x})
	}
	sort.Slice(out, func(i, j int) bool { return status.CreatedBefore(out[i].obj, out[j].obj) })
	return out, nil
}

// Reconcile handles triggers, keeps the history and judges regressions.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	s := &benchv1.BenchmarkSchedule{}
	if err := r.Get(ctx, req.NamespacedName, s); err != nil {
		if apierrors.IsNotFound(err) {
			metrics.ForgetSchedule(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("BenchmarkSchedule", klog.KObj(s)))
	if stop, err := r.retention(s).Handle(ctx); stop || err != nil {
		return status.ConflictLater(ctx, err)
	}
	base := s.DeepCopy()
	defer func() {
		written, perr := status.Patch(ctx, r.Client, base, s, base.Status, s.Status)
		if perr != nil && err == nil {
			err = perr
		}
		// The transitions' events once the status recording them is
		// stored: a refused write is judged again from what is stored.
		if written && err == nil {
			err = r.announceStored(ctx, s)
		}
	}()
	s.Status.ObservedGeneration = s.Generation
	now := r.Clock.Now()
	// What a stopped manager left unannounced is said first.
	if err := r.announce(ctx, s); err != nil {
		return ctrl.Result{}, err
	}

	owned, err := r.owned(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	var active []client.Object
	s.Status.Active = nil
	for _, o := range owned {
		if !o.phase.Terminal() {
			active = append(active, o.obj)
			s.Status.Active = append(s.Status.Active, o.obj.GetName())
		}
	}
	r.updateHistory(s, owned)
	events := r.judge(s)
	setLatest(s, owned)
	queueTransitions(s, leadWithHeadline(s, events), now)
	if err := r.prune(ctx, s, owned); err != nil {
		return ctrl.Result{}, err
	}
	if s.Spec.Suspend {
		return ctrl.Result{}, nil
	}

	hash := TemplateHash(s)
	onChange := s.Spec.OnTemplateChange == nil || *s.Spec.OnTemplateChange
	switch {
	case s.Status.TemplateHash == "" && !s.Spec.RunOnCreate:
		// The template as created is the starting point, not a change.
		s.Status.TemplateHash = hash
	case onChange && s.Status.TemplateHash != hash || s.Status.TemplateHash == "":
		if len(active) > 0 && policy(s) == benchv1.ConcurrencyForbid {
			break // exactly one run for this change, once the active one is done
		}
		if err := r.trigger(ctx, s, active, "t"+hash, "template changed"); err != nil {
			return ctrl.Result{}, err
		}
		s.Status.TemplateHash = hash
	}

	if s.Spec.Schedule == "" {
		return ctrl.Result{}, nil
	}
	sched, err := cron.ParseStandard(s.Spec.Schedule)
	if err != nil {
		r.Recorder.Eventf(s, corev1.EventTypeWarning, "InvalidSchedule", "spec.schedule %q: %v", s.Spec.Schedule, err)
		return ctrl.Result{}, nil
	}
	last := s.CreationTimestamp.Time
	if s.Status.LastScheduleTime != nil {
		last = s.Status.LastScheduleTime.Time
	}
	next := sched.Next(last.UTC())
	if !now.Before(next) {
		// Missed triggers collapse into one (the latest due).
		for t := sched.Next(next); !now.Before(t); t = sched.Next(t) {
			next = t
		}
		if len(active) > 0 && policy(s) == benchv1.ConcurrencyForbid {
			r.Recorder.Eventf(s, corev1.EventTypeNormal, "Skipped", "cron trigger at %s skipped: %s is still active", next.Format(time.RFC3339), active[0].GetName())
		} else if err := r.trigger(ctx, s, active, fmt.Sprintf("c%d", next.Unix()/60), "cron "+s.Spec.Schedule); err != nil {
			return ctrl.Result{}, err
		}
		t := metav1.NewTime(next)
		s.Status.LastScheduleTime = &t
		next = sched.Next(next)
	}
	return ctrl.Result{RequeueAfter: next.Sub(now) + time.Second}, nil
}

func policy(s *benchv1.BenchmarkSchedule) benchv1.ConcurrencyPolicy {
	if s.Spec.ConcurrencyPolicy == "" {
		return benchv1.ConcurrencyForbid
	}
	return s.Spec.ConcurrencyPolicy
}

// trigger creates the run for one trigger; its name comes from the trigger,
// so a retried reconcile cannot create it twice.
func (r *Reconciler) trigger(ctx context.Context, s *benchv1.BenchmarkSchedule, active []client.Object, suffix, why string) error {
	if policy(s) == benchv1.ConcurrencyReplace {
		for _, a := range active {
			if err := r.Delete(ctx, a); client.IgnoreNotFound(err) != nil {
				return err
			}
			r.Recorder.Eventf(s, corev1.EventTypeNormal, "Replaced", "Deleted active %s for a new trigger", a.GetName())
		}
	}
	name := specs.Name(s.Name, suffix, s.UID, specs.MaxObjectNameLength)
	lbls := map[string]string{}
	var obj client.Object
	if t := s.Spec.ComparisonTemplate; t != nil {
		for k, v := range t.Labels {
			lbls[k] = v
		}
		obj = &benchv1.BenchmarkComparison{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: lbls}, Spec: t.Spec}
	} else {
		if s.Spec.RunTemplate == nil {
			return nil // refused at admission: exactly one template
		}
		for k, v := range s.Spec.RunTemplate.Labels {
			lbls[k] = v
		}
		obj = &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: lbls}, Spec: s.Spec.RunTemplate.Spec}
	}
	lbls[benchv1.LabelSchedule] = string(s.UID)
	if err := controllerutil.SetControllerReference(s, obj, r.Scheme()); err != nil {
		return err
	}
	if err := r.Create(ctx, obj); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("while creating %s for a trigger: %w", name, err)
		}
		// The trigger's own run (a retried reconcile) is done; anyone
		// else's object of that name must not count as this trigger's run.
		if err := status.EnsureControlledBy(ctx, r.Client, s, obj); err != nil {
			if errors.Is(err, status.ErrNameTaken) {
				r.Recorder.Event(s, corev1.EventTypeWarning, benchv1.ReasonNameConflict, status.Truncate(err.Error(), 1024))
			}
			return err
		}
		return nil
	}
	s.Status.LastRun = name
	kind := "BenchmarkRun"
	if s.Spec.ComparisonTemplate != nil {
		kind = "BenchmarkComparison"
	}
	log.FromContext(ctx).Info("Created "+kind, "name", name, "trigger", why)
	r.Recorder.Eventf(s, corev1.EventTypeNormal, "RunCreated", "Created %s %s (%s)", kind, name, why)
	return nil
}

// watchedComparison finds the watched metric's row of a finished
// comparison (status.results: the primary metric per step, first candidate).
func watchedComparison(s *benchv1.BenchmarkSchedule, c *benchv1.BenchmarkComparison) (benchv1.MetricComparison, bool) {
	metric, op, step := "", "", ""
	if p := s.Spec.Regression; p != nil {
		metric, op, step = p.Metric, p.Operation, p.Step
	}
	for _, row := range c.Status.Results {
		if (metric == "" || row.Metric == metric) && (op == "" || row.Operation == op) && (step == "" || row.Step == step) {
			return row, true
		}
	}
	return benchv1.MetricComparison{}, false
}

// watched finds the watched metric of a finished run: the policy's metric
// (default the primary) at the policy's step (default the headline step).
func watched(s *benchv1.BenchmarkSchedule, run *benchv1.BenchmarkRun) (value float64, unit string, dir benchv1.Direction, ok bool) {
	metric, op, step := "", "", ""
	if p := s.Spec.Regression; p != nil {
		metric, op, step = p.Metric, p.Operation, p.Step
	}
	if run.Spec.Capacity != nil {
		return watchedCapacity(run.Status.Capacity, metric)
	}
	if run.Status.Primary != nil {
		if metric == "" {
			metric, op = run.Status.Primary.Name, run.Status.Primary.Operation
		}
		if step == "" {
			step = run.Status.Primary.Step
		}
	}
	rejections, _ := benchv1.Rejections(run.Annotations)
	for _, st := range run.Status.Steps {
		if step != "" && st.Name != step {
			continue
		}
		for _, m := range st.Summary {
			if m.Name != metric || m.Operation != op || m.N == 0 {
				continue
			}
			if len(rejections) == 0 {
				return m.Median, m.Unit, m.Direction, true
			}
			// Rejected measurements leave the median: it is taken again
			// over the valid ones that are left.
			var vals []float64
			for _, rep := range st.Repetitions {
				if _, rejected := benchv1.Rejected(rejections, st.Name, rep.Index); rejected || rep.Verdict != benchv1.VerdictSucceeded {
					continue
				}
				for _, v := range rep.Metrics {
					if v.Name == metric && v.Operation == op && v.Source == m.Source {
						vals = append(vals, v.Value)
					}
				}
			}
			if len(vals) == 0 {
				return 0, "", "", false
			}
			return stats.Summarize(vals).Median, m.Unit, m.Direction, true
		}
	}
	return 0, "", "", false
}

// watchedCapacity is what a capacity run found, tracked like a headline
// metric: the maximum (the default, or metric capacityMaximum), or the
// throughput there (throughputAtMaximum). A search that found none has
// no value: its entry says so and it never enters a baseline.
func watchedCapacity(cs *benchv1.CapacityStatus, metric string) (float64, string, benchv1.Direction, bool) {
	if cs == nil || cs.Maximum == nil || cs.StopReason == benchv1.CapacityMeasurementFailed {
		return 0, "", "", false
	}
	switch metric {
	case "", compare.MetricCapacity:
		return float64(*cs.Maximum), compare.CapacityUnit(cs.Parameter), benchv1.HigherIsBetter, true
	case compare.MetricAtCapacity:
		if t := cs.Throughput; t != nil {
			return t.Value, t.Unit, t.Direction, true
		}
	}
	return 0, "", "", false
}

// rejectedNote says what of a run a person rejected, for its history entry.
func rejectedNote(run *benchv1.BenchmarkRun) string {
	rs, _ := benchv1.Rejections(run.Annotations)
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return status.Truncate(strings.Join(parts, "; "), 1024)
}

func (r *Reconciler) updateHistory(s *benchv1.BenchmarkSchedule, owned []scheduled) {
	known := map[string]int{}
	for i, h := range s.Status.History {
		known[h.Run] = i
	}
	for _, o := range owned {
		if !o.phase.Terminal() {
			continue
		}
		e := benchv1.HistoryEntry{Run: o.obj.GetName(), StartTime: o.obj.GetCreationTimestamp(), Phase: o.phase, Release: o.obj.GetLabels()[benchv1.LabelRelease]}
		switch {
		case o.fromRun != nil:
			if v, unit, dir, ok := watched(s, o.fromRun); ok {
				e.Value, e.Unit, e.Direction = &v, unit, dir
			}
			e.Rejected = rejectedNote(o.fromRun)
		case o.fromComp != nil:
			if row, ok := watchedComparison(s, o.fromComp); ok {
				e.Value, e.Unit, e.Direction, e.Verdict = row.DeltaPercent, "%Δ", row.Direction, row.Verdict
			}
		}
		if idx, ok := known[e.Run]; ok {
			// The judgement's marks are the judgement's to set (judge).
			old := s.Status.History[idx]
			e.ChangePoint, e.Provisional, e.Judgement, e.DeltaPercent = old.ChangePoint, old.Provisional, old.Judgement, old.DeltaPercent
			e.Transitions, e.Acknowledged = old.Transitions, old.Acknowledged
			s.Status.History[idx] = e
			continue
		}
		s.Status.History = append(s.Status.History, e)
	}
	sort.SliceStable(s.Status.History, func(i, j int) bool {
		return s.Status.History[i].StartTime.Before(&s.Status.History[j].StartTime)
	})
}

// prune deletes finished runs (or comparisons) beyond the history limits,
// oldest first.
func (r *Reconciler) prune(ctx context.Context, s *benchv1.BenchmarkSchedule, owned []scheduled) error {
	keepOK, keepFailed := int32(10), int32(3)
	if s.Spec.SuccessfulRunsHistoryLimit != nil {
		keepOK = *s.Spec.SuccessfulRunsHistoryLimit
	}
	if s.Spec.FailedRunsHistoryLimit != nil {
		keepFailed = *s.Spec.FailedRunsHistoryLimit
	}
	var ok, failed []client.Object
	for _, o := range owned {
		switch o.phase {
		case benchv1.PhaseSucceeded:
			ok = append(ok, o.obj)
		case benchv1.PhaseFailed, benchv1.PhaseInvalid:
			failed = append(failed, o.obj)
		}
	}
	for _, group := range []struct {
		objs []client.Object
		keep int32
	}{{ok, keepOK}, {failed, keepFailed}} {
		for i := 0; i < len(group.objs)-int(group.keep); i++ {
			if err := r.Delete(ctx, group.objs[i]); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}

// retention releases the schedule's runs and comparisons when it is deleted
// with deletionPolicy Retain.
func (r *Reconciler) retention(s *benchv1.BenchmarkSchedule) retention.Parent {
	policy := s.Spec.DeletionPolicy
	if policy == "" {
		policy = benchv1.DeletionRetain
	}
	var reader client.Reader = r.Client
	if r.APIReader != nil {
		reader = r.APIReader
	}
	return retention.Parent{
		Client: r.Client, Reader: reader, Uncached: r.APIReader != nil, Recorder: r.Recorder, Object: s, Kind: "BenchmarkSchedule", Policy: policy,
		Children: func(ctx context.Context) ([]client.Object, error) {
			sel := client.MatchingLabels{benchv1.LabelSchedule: string(s.UID)}
			var runs benchv1.BenchmarkRunList
			if err := reader.List(ctx, &runs, client.InNamespace(s.Namespace), sel); err != nil {
				return nil, err
			}
			var cmps benchv1.BenchmarkComparisonList
			if err := reader.List(ctx, &cmps, client.InNamespace(s.Namespace), sel); err != nil {
				return nil, err
			}
			var out []client.Object
			for i := range runs.Items {
				out = append(out, &runs.Items[i])
			}
			for i := range cmps.Items {
				out = append(out, &cmps.Items[i])
			}
			return out, nil
		},
	}
}

// SetupWithManager watches schedules and the runs they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	metrics.Register(mgr.GetCache())
	return ctrl.NewControllerManagedBy(mgr).
		For(&benchv1.BenchmarkSchedule{}).
		Owns(&benchv1.BenchmarkRun{}).
		Owns(&benchv1.BenchmarkComparison{}).
		Named("benchmarkschedule").
		Complete(r)
}
