package comparison

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
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
)

// maxStatusRows bounds status.results; the report ConfigMap has them all.
const maxStatusRows = 64

// Reconciler runs the variants of a comparison as
// BenchmarkRuns in the requested order and compares them with the baseline.
type Reconciler struct {
	client.Client
	// APIReader, when set, lists the runs a comparison releases as it is
	// deleted past the cache (which may not have seen a run just created);
	// without it the client's cache is read.
	APIReader client.Reader
	Recorder  record.EventRecorder
}

// +kubebuilder:rbac:groups=bench.dbperf.io,resources=benchmarkcomparisons,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=bench.dbperf.io,resources=benchmarkcomparisons/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=bench.dbperf.io,resources=benchmarkcomparisons/finalizers,verbs=update
// +kubebuilder:rbac:groups=bench.dbperf.io,resources=benchmarkruns,verbs=list;create;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=patch

// plannedRun is one child run and the batch it starts in.
type plannedRun struct {
	name, variant string
	index         int32
	batch         int
}

// plan lists the child runs in order: Interleaved and Sequential run one at
// a time (i-major, the variants reversed in every even round: ABBA, so that
// a linear drift within the rounds favours no variant; and variant-major),
// Concurrent runs all variants of a repetition together.
func plan(cmp *benchv1.BenchmarkComparison) []plannedRun {
	n := cmp.Spec.RunsPerVariant
	if n < 1 {
		n = 1
	}
	var out []plannedRun
	add := func(v benchv1.Variant, i int32, batch int) {
		out = append(out, plannedRun{name: RunName(cmp, v.Name, i), variant: v.Name, index: i, batch: batch})
	}
	switch cmp.Spec.Order {
	case benchv1.OrderSequential:
		for _, v := range cmp.Spec.Variants {
			for i := int32(1); i <= n; i++ {
				add(v, i, len(out))
			}
		}
	case benchv1.OrderConcurrent:
		for i := int32(1); i <= n; i++ {
			for _, v := range cmp.Spec.Variants {
				add(v, i, int(i))
			}
		}
	default: // Interleaved
		for i := int32(1); i <= n; i++ {
			vs := cmp.Spec.Variants
			if i%2 == 0 {
				vs = slices.Clone(vs)
				slices.Reverse(vs)
			}
			for _, v := range vs {
				add(v, i, len(out))
			}
		}
	}
	return out
}

// RunName is the name of a comparison's run of a variant, repetition i
// (from 1).
func RunName(cmp *benchv1.BenchmarkComparison, variant string, i int32) string {
	return specs.Name(cmp.Name, fmt.Sprintf("%s-%d", variant, i), cmp.UID, specs.MaxObjectNameLength)
}

// VariantSpec applies a variant's merge patch to the template, refusing
// fields the BenchmarkRun spec does not have; with a covariate, every run
// gets a canary (the template's, else the default one).
func VariantSpec(cmp *benchv1.BenchmarkComparison, v benchv1.Variant) (benchv1.BenchmarkRunSpec, error) {
	spec := *cmp.Spec.Template.DeepCopy()
	if cmp.Spec.Covariate != nil && spec.Canary == nil {
		spec.Canary = &benchv1.CanarySpec{}
	}
	if v.Patch == nil || len(v.Patch.Raw) == 0 {
		return spec, nil
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return spec, err
	}
	patched, err := jsonpatch.MergePatch(raw, v.Patch.Raw)
	if err != nil {
		return spec, fmt.Errorf("variant %s: patch: %w", v.Name, err)
	}
	var out benchv1.BenchmarkRunSpec
	dec := json.NewDecoder(bytes.NewReader(patched))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return spec, fmt.Errorf("variant %s: the patched template is not a BenchmarkRun spec: %w", v.Name, err)
	}
	return out, nil
}

// setCompared sets the comparison's one condition, Compared.
func setCompared(cmp *benchv1.BenchmarkComparison, s metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&cmp.Status.Conditions, metav1.Condition{
		Type: benchv1.ConditionCompared, Status: s, Reason: reason, Message: status.Truncate(msg, 1024), ObservedGeneration: cmp.Generation,
	})
}

// Reconcile creates the next batch of runs, or compares when all are done.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	cmp := &benchv1.BenchmarkComparison{}
	if err := r.Get(ctx, req.NamespacedName, cmp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("BenchmarkComparison", klog.KObj(cmp)))
	if stop, err := r.retention(cmp).Handle(ctx); stop || err != nil {
		return status.ConflictLater(ctx, err)
	}
	base := cmp.DeepCopy()
	defer func() {
		written, perr := status.Patch(ctx, r.Client, base, cmp, base.Status, cmp.Status)
		if perr != nil && err == nil {
			err = perr
		}
		// The ending's event once the status that records it is stored: a
		// refused write is judged again from what is stored, never said twice.
		if e, ok := endingEvent(cmp, &base.Status, &cmp.Status); ok && written {
			e.Emit(r.Recorder, cmp)
		}
	}()
	if cmp.Status.Phase.Terminal() {
		changed, err := r.rejectionsChanged(ctx, cmp)
		if err != nil || !changed {
			return ctrl.Result{}, err
		}
		log.FromContext(ctx).Info("Comparing again: rejections of its runs changed")
	}
	cmp.Status.ObservedGeneration = cmp.Generation
	if cmp.Status.Phase == "" {
		cmp.Status.Phase = benchv1.ComparisonPending
	}

	specsByVariant := map[string]benchv1.BenchmarkRunSpec{}
	for _, v := range cmp.Spec.Variants {
		s, err := VariantSpec(cmp, v)
		if err != nil {
			r.fail(cmp, benchv1.ReasonInvalidPatch, err.Error())
			return ctrl.Result{}, nil
		}
		specsByVariant[v.Name] = s
	}
	pairs, refused := stepPairs(cmp, specsByVariant)
	if refused != nil {
		r.fail(cmp, refused.reason, refused.message)
		return ctrl.Result{}, nil
	}

	var runs benchv1.BenchmarkRunList
	if err := r.List(ctx, &runs, client.InNamespace(cmp.Namespace), client.MatchingLabels{benchv1.LabelComparison: string(cmp.UID)}); err != nil {
		return ctrl.Result{}, err
	}
	existing := map[string]*benchv1.BenchmarkRun{}
	for i := range runs.Items {
		// A label is easily copied; only runs the comparison controls are its own.
		if metav1.IsControlledBy(&runs.Items[i], cmp) {
			existing[runs.Items[i].Name] = &runs.Items[i]
		}
	}
	planned := plan(cmp)
	if cmp.Spec.Sequential != nil {
		if planned = r.sequentialLook(ctx, cmp, existing, planned, pairs); cmp.Status.Phase == benchv1.ComparisonFailed {
			return ctrl.Result{}, nil
		}
	}
	cmp.Status.Runs = nil
	done := 0
	for _, p := range planned {
		cr := benchv1.ComparisonRun{Name: p.name, Variant: p.variant, Index: p.index}
		if run, ok := existing[p.name]; ok {
			cr.Phase = run.Status.Phase
			if run.Status.Phase.Terminal() {
				done++
			}
		}
		cmp.Status.Runs = append(cmp.Status.Runs, cr)
	}
	cmp.Status.Progress = fmt.Sprintf("%d/%d", done, len(planned))

	if len(existing) == 0 {
		// Before the first run: every variant's run as the API server
		// would take it, so that a variant it refuses fails the comparison
		// now, not after the runs before it.
		if err := r.checkVariants(ctx, cmp, planned, specsByVariant); err != nil || cmp.Status.Phase == benchv1.ComparisonFailed {
			return ctrl.Result{}, err
		}
	}
	// The first batch with an unfinished run is the current one.
	for batch := 0; batch <= planned[len(planned)-1].batch; batch++ {
		pending := false
		for _, p := range planned {
			if p.batch != batch {
				continue
			}
			run, ok := existing[p.name]
			if !ok {
				if err := r.createRun(ctx, cmp, p, specsByVariant[p.variant]); err != nil {
					return ctrl.Result{}, err
				}
				if cmp.Status.Phase == benchv1.ComparisonFailed {
					return ctrl.Result{}, nil // refused: the failure stays, said once
				}
				pending = true
				continue
			}
			if !run.Status.Phase.Terminal() {
				pending = true
			}
		}
		if pending {
			cmp.Status.Phase = benchv1.ComparisonRunning
			setCompared(cmp, metav1.ConditionFalse, benchv1.ReasonRunning, "runs in progress: "+cmp.Status.Progress)
			return ctrl.Result{}, nil
		}
	}
	return ctrl.Result{}, r.compareAll(ctx, cmp, existing, planned, pairs)
}

// fail ends the comparison; its event is said once the status is stored
// (endingEvent).
func (r *Reconciler) fail(cmp *benchv1.BenchmarkComparison, reason, msg string) {
	cmp.Status.Phase = benchv1.ComparisonFailed
	setCompared(cmp, metav1.ConditionFalse, reason, msg)
	// A comparison that compares nothing has a verdict a pipeline stops
	// on; a name taken by another object is the cluster's problem.
	if reason != benchv1.ReasonNameConflict {
		cmp.Status.Verdict, cmp.Status.Headline = benchv1.OverallInvalid, status.Truncate("INVALID — "+msg, 1024)
	}
}

// endingEvent is the event of a comparison that has just ended (or ended
// again differently, compared anew after a rejection): Compared with the
// verdicts, or the reason it failed.
func endingEvent(cmp *benchv1.BenchmarkComparison, before, after *benchv1.BenchmarkComparisonStatus) (status.Event, bool) {
	if !after.Phase.Terminal() {
		return status.Event{}, false
	}
	was := meta.FindStatusCondition(before.Conditions, benchv1.ConditionCompared)
	now := meta.FindStatusCondition(after.Conditions, benchv1.ConditionCompared)
	if now == nil || was != nil && before.Phase == after.Phase && was.Reason == now.Reason && was.Message == now.Message {
		return status.Event{}, false
	}
	if after.Phase == benchv1.ComparisonSucceeded {
		return status.Event{Type: corev1.EventTypeNormal, Reason: benchv1.ReasonCompared,
			Message: fmt.Sprintf("%s against %s: %s", strings.Join(candidates(cmp), ", "), cmp.Spec.Baseline, after.Summary)}, true
	}
	return status.Event{Type: corev1.EventTypeWarning, Reason: now.Reason, Message: now.Message}, true
}

// newRun is the run p of the comparison, controlled by it.
func (r *Reconciler) newRun(cmp *benchv1.BenchmarkComparison, p plannedRun, spec benchv1.BenchmarkRunSpec) (*benchv1.BenchmarkRun, error) {
	run := &benchv1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: cmp.Namespace, Labels: map[string]string{
			benchv1.LabelComparison: string(cmp.UID), benchv1.LabelVariant: p.variant, "app.kubernetes.io/managed-by": "dbperf-operator",
		}},
		Spec: spec,
	}
	return run, controllerutil.SetControllerReference(cmp, run, r.Scheme())
}

// checkVariants sends the first run of every variant to the API server as
// a dry run: one it refuses as invalid (a CEL rule the patched template
// breaks) fails the comparison, naming the variant and the rule. Other
// errors are returned (the next pass tries again); a name already taken is
// createRun's to judge.
func (r *Reconciler) checkVariants(ctx context.Context, cmp *benchv1.BenchmarkComparison, planned []plannedRun, specsByVariant map[string]benchv1.BenchmarkRunSpec) error {
	seen := map[string]bool{}
	for _, p := range planned {
		if seen[p.variant] {
			continue
		}
		seen[p.variant] = true
		run, err := r.newRun(cmp, p, specsByVariant[p.variant])
		if err != nil {
			return err
		}
		switch err := r.Create(ctx, run, client.DryRunAll); {
		case err == nil, apierrors.IsAlreadyExists(err):
		case apierrors.IsInvalid(err):
			r.refused(cmp, p.variant, err)
			return nil
		default:
			return fmt.Errorf("while checking variant %s's run with the API server (dry run): %w", p.variant, err)
		}
	}
	return nil
}

// refused fails the comparison for a variant whose run the API server
// refused, with the server's reasons.
func (r *Reconciler) refused(cmp *benchv1.BenchmarkComparison, variant string, err error) {
	r.fail(cmp, benchv1.ReasonInvalidPatch, fmt.Sprintf("variant %s: the API server refused its run: %v", variant, err))
}

func (r *Reconciler) createRun(ctx context.Context, cmp *benchv1.BenchmarkComparison, p plannedRun, spec benchv1.BenchmarkRunSpec) error {
	run, err := r.newRun(cmp, p, spec)
	if err != nil {
		return err
	}
	err = r.Create(ctx, run)
	switch {
	case apierrors.IsAlreadyExists(err):
		// Ours (the cache had not seen it yet) is fine; anyone else's must
		// not count as this comparison's run.
		if err := status.EnsureControlledBy(ctx, r.Client, cmp, run); err != nil {
			if !errors.Is(err, status.ErrNameTaken) {
				return err
			}
			setCompared(cmp, metav1.ConditionFalse, benchv1.ReasonNameConflict, err.Error())
			r.Recorder.Event(cmp, corev1.EventTypeWarning, benchv1.ReasonNameConflict, status.Truncate(err.Error(), 1024))
			return err
		}
		return nil
	case apierrors.IsInvalid(err):
		r.refused(cmp, p.variant, err)
		return nil
	case err != nil:
		return fmt.Errorf("while creating run %s: %w", p.name, err)
	}
	log.FromContext(ctx).Info("Created run", "run", p.name, "variant", p.variant, "index", p.index)
	r.Recorder.Eventf(cmp, corev1.EventTypeNormal, "RunCreated", "Created BenchmarkRun %s (variant %s, %d of %d)", p.name, p.variant, p.index, cmp.Spec.RunsPerVariant)
	return nil
}

// compareAll compares every variant with the baseline and writes the report.
func (r *Reconciler) compareAll(ctx context.Context, cmp *benchv1.BenchmarkComparison, existing map[string]*benchv1.BenchmarkRun,
	planned []plannedRun, pairs map[string]map[string]string) error {
	reports := r.buildReports(ctx, cmp, existing, planned, pairs)
	if reports == nil {
		return nil // failed, and said why
	}
	excluded := countExcluded(reports) // the baseline's exclusions repeat in every report
	if err := r.writeReport(ctx, cmp, reports); err != nil {
		return err
	}
	cmp.Status.Results = nil
	var better, worse, same, unsure int
	for _, rep := range reports {
		better, worse, same, unsure = better+rep.Better, worse+rep.Worse, same+rep.NoChange, unsure+rep.Inconclusive
		for _, row := range rep.Rows {
			if !rep.IsPrimary(row) || len(cmp.Status.Results) >= maxStatusRows {
				continue
			}
			cmp.Status.Results = append(cmp.Status.Results, benchv1.MetricComparison{
				Candidate: rep.Candidate, Step: row.Step, CandidateStep: row.CandidateStep, Metric: row.Metric, Operation: row.Operation, Unit: row.Unit,
				Direction: row.Direction, BaselineMedian: row.Baseline.Median, CandidateMedian: row.Candidate.Median,
				BaselineN: int32(row.Baseline.N), CandidateN: int32(row.Candidate.N),
				DeltaPercent: status.Finite(float64(row.DeltaPercent)), CILowPercent: status.Finite(float64(row.CILowPercent)), CIHighPercent: status.Finite(float64(row.CIHighPercent)),
				PValue: status.Round(float64(row.PAdjusted), 6), Verdict: row.Verdict, Reason: status.Truncate(row.Reason, 256),
			})
		}
	}
	cmp.Status.Verdict, cmp.Status.Headline = overallVerdict(reports)
	metrics.RecordComparison(cmp, better, worse, same, unsure)
	cmp.Status.ExcludedMeasurements = int32(excluded)
	cmp.Status.Summary = fmt.Sprintf("%d better, %d worse, %d no change, %d inconclusive", better, worse, same, unsure)
	cmp.Status.Rejections = rejectionsOf(runsOf(existing, planned))
	var nothing []string
	for _, rep := range reports {
		if why := nothingCompared(rep); why != "" {
			nothing = append(nothing, fmt.Sprintf("%s against %s: %s", rep.Candidate, rep.Baseline, why))
		}
	}
	if len(nothing) > 0 {
		// Every run ended and the report keeps what they measured, but a
		// candidate was not compared: never Compared, never Succeeded.
		why := strings.Join(nothing, "; ")
		cmp.Status.Summary = status.Truncate("nothing compared: "+why, 256)
		r.fail(cmp, benchv1.ReasonNothingCompared, fmt.Sprintf("every run finished, but nothing was compared: %s; %d measurements excluded; report in ConfigMap %s",
			why, excluded, cmp.Status.ReportConfigMap))
		return nil
	}
	cmp.Status.Phase = benchv1.ComparisonSucceeded
	setCompared(cmp, metav1.ConditionTrue, benchv1.ReasonCompared,
		fmt.Sprintf("every run finished; %s; %d measurements excluded; report in ConfigMap %s", cmp.Status.Summary, excluded, cmp.Status.ReportConfigMap))
	return nil
}

// buildReports compares every candidate with the baseline on the planned
// runs; nil when they cannot be compared (the comparison has failed and
// says why).
func (r *Reconciler) buildReports(ctx context.Context, cmp *benchv1.BenchmarkComparison, existing map[string]*benchv1.BenchmarkRun,
	planned []plannedRun, pairs map[string]map[string]string) []*compare.Report {
	sides := map[string]*compare.Side{}
	paths := map[string][]string{}
	for _, v := range cmp.Spec.Variants {
		sides[v.Name] = &compare.Side{Name: v.Name}
		if v.Patch != nil {
			p, err := compare.PatchPaths(v.Patch.Raw)
			if err != nil {
				r.fail(cmp, benchv1.ReasonInvalidPatch, fmt.Sprintf("variant %s: %v", v.Name, err))
				return nil
			}
			paths[v.Name] = p
		}
	}
	for _, p := range planned {
		if run := existing[p.name]; run != nil {
			full := compare.FromBenchmarkRun(run)
			full.AddDocument(r.document(ctx, run))
			if cmp.Spec.Order != benchv1.OrderSequential {
				full.Round = p.index // a round's runs of every variant ran together
			}
			sides[p.variant].Runs = append(sides[p.variant].Runs, full)
		}
	}
	var reports []*compare.Report
	design := sequentialDesign(cmp, planned)
	for _, v := range cmp.Spec.Variants {
		if v.Name == cmp.Spec.Baseline {
			continue
		}
		opts := compare.OptionsFor(cmp.Spec.Criteria)
		opts.StepPairs = pairs[v.Name]
		opts.IgnorePaths = append(append([]string{}, paths[cmp.Spec.Baseline]...), paths[v.Name]...)
		opts.Sequential = design
		if c := cmp.Spec.Covariate; c != nil {
			opts.Covariate = compare.CanaryMetric(c.Canary)
		}
		rep, err := compare.Build(*sides[cmp.Spec.Baseline], *sides[v.Name], opts)
		if err != nil {
			r.fail(cmp, benchv1.ReasonNotComparable, err.Error())
			return nil
		}
		reports = append(reports, rep)
	}
	return reports
}

func countExcluded(reports []*compare.Report) int {
	seen := map[string]bool{}
	for _, rep := range reports {
		for _, e := range rep.Excluded {
			seen[fmt.Sprintf("%s/%s/%d", e.Run, e.Step, e.Repetition)] = true
		}
	}
	return len(seen)
}

func candidates(cmp *benchv1.BenchmarkComparison) []string {
	var out []string
	for _, v := range cmp.Spec.Variants {
		if v.Name != cmp.Spec.Baseline {
			out = append(out, v.Name)
		}
	}
	return out
}

// writeReport applies the report ConfigMap (server-side apply: no read of
// ConfigMaps outside the cache is needed).
func (r *Reconciler) writeReport(ctx context.Context, cmp *benchv1.BenchmarkComparison, reports []*compare.Report) error {
	data, binary, note, err := compare.ReportData(reports)
	if err != nil {
		return err
	}
	if note != "" {
		log.FromContext(ctx).Info("Report shortened", "note", note)
	}
	name := specs.Name(cmp.Name, "report", cmp.UID, specs.MaxObjectNameLength)
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cmp.Namespace, Labels: map[string]string{benchv1.LabelComparison: string(cmp.UID), "app.kubernetes.io/managed-by": "dbperf-operator"}},
		Data:       data,
		BinaryData: binary,
	}
	if err := controllerutil.SetControllerReference(cmp, cm, r.Scheme()); err != nil {
		return err
	}
	if err := r.Patch(ctx, cm, client.Apply, client.FieldOwner("dbperf-operator"), client.ForceOwnership); err != nil {
		return fmt.Errorf("while writing the report ConfigMap %s: %w", name, err)
	}
	cmp.Status.ReportConfigMap = name
	return nil
}

// comparisonDeletionPolicy is the policy a comparison's deletion follows: a
// comparison a schedule controls goes with its runs (the schedule's history
// limits delete it; a schedule deleted with Retain releases it first), any
// other its spec's.
func comparisonDeletionPolicy(cmp *benchv1.BenchmarkComparison) benchv1.DeletionPolicy {
	if ref := metav1.GetControllerOf(cmp); ref != nil && ref.Kind == "BenchmarkSchedule" && strings.HasPrefix(ref.APIVersion, benchv1.GroupVersion.Group+"/") {
		return benchv1.DeletionDelete
	}
	if cmp.Spec.DeletionPolicy == "" {
		return benchv1.DeletionRetain
	}
	return cmp.Spec.DeletionPolicy
}

// retention releases the comparison's runs and its report ConfigMap when it
// is deleted with deletionPolicy Retain.
func (r *Reconciler) retention(cmp *benchv1.BenchmarkComparison) retention.Parent {
	report := cmp.Status.ReportConfigMap
	if report == "" {
		report = specs.Name(cmp.Name, "report", cmp.UID, specs.MaxObjectNameLength)
	}
	var reader client.Reader = r.Client
	if r.APIReader != nil {
		reader = r.APIReader
	}
	return retention.Parent{
		Client: r.Client, Reader: reader, Uncached: r.APIReader != nil, Recorder: r.Recorder, Object: cmp, Kind: "BenchmarkComparison", Policy: comparisonDeletionPolicy(cmp),
		ConfigMaps: []string{report},
		Children: func(ctx context.Context) ([]client.Object, error) {
			var runs benchv1.BenchmarkRunList
			if err := reader.List(ctx, &runs, client.InNamespace(cmp.Namespace), client.MatchingLabels{benchv1.LabelComparison: string(cmp.UID)}); err != nil {
				return nil, err
			}
			out := make([]client.Object, len(runs.Items))
			for i := range runs.Items {
				out[i] = &runs.Items[i]
			}
			return out, nil
		},
	}
}

// SetupWithManager watches comparisons and the runs they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	metrics.Register(mgr.GetCache())
	return ctrl.NewControllerManagedBy(mgr).
		For(&benchv1.BenchmarkComparison{}).
		Owns(&benchv1.BenchmarkRun{}).
		Named("benchmarkcomparison").
		Complete(r)
}

// document is a run's results document, from the cache; nil when it is
// not there (the comparison then uses the status's headline metrics and
// its report says so).
func (r *Reconciler) document(ctx context.Context, run *benchv1.BenchmarkRun) *specs.Document {
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: specs.ResultsConfigMapName(run)}, cm); err != nil {
		if !apierrors.IsNotFound(err) {
			log.FromContext(ctx).Info("Results document unreadable; comparing the headline metrics", "run", run.Name, "error", err.Error())
		}
		return nil
	}
	doc, err := specs.ReadDocument(cm)
	if err != nil {
		log.FromContext(ctx).Info("Results document unreadable; comparing the headline metrics", "run", run.Name, "error", err.Error())
		return nil
	}
	return doc
}

// rejectionsChanged says whether the rejections of a comparison's runs
// differ from those its report left out (a comparison that compared
// nothing, every measurement rejected, compares again too).
func (r *Reconciler) rejectionsChanged(ctx context.Context, cmp *benchv1.BenchmarkComparison) (bool, error) {
	compared := meta.FindStatusCondition(cmp.Status.Conditions, benchv1.ConditionCompared)
	if cmp.Status.Phase != benchv1.ComparisonSucceeded && (compared == nil || compared.Reason != benchv1.ReasonNothingCompared) {
		return false, nil
	}
	var runs benchv1.BenchmarkRunList
	if err := r.List(ctx, &runs, client.InNamespace(cmp.Namespace), client.MatchingLabels{benchv1.LabelComparison: string(cmp.UID)}); err != nil {
		return false, err
	}
	var own []*benchv1.BenchmarkRun
	for i := range runs.Items {
		if metav1.IsControlledBy(&runs.Items[i], cmp) {
			own = append(own, &runs.Items[i])
		}
	}
	return !slices.Equal(rejectionsOf(own), cmp.Status.Rejections), nil
}

// runsOf lists the planned runs that exist.
func runsOf(existing map[string]*benchv1.BenchmarkRun, planned []plannedRun) []*benchv1.BenchmarkRun {
	var out []*benchv1.BenchmarkRun
	for _, p := range planned {
		if run := existing[p.name]; run != nil {
			out = append(out, run)
		}
	}
	return out
}

// rejectionsOf names every rejection of the runs, sorted: "run: what".
func rejectionsOf(runs []*benchv1.BenchmarkRun) []string {
	var out []string
	for _, run := range runs {
		rs, _ := benchv1.Rejections(run.Annotations)
		for _, rj := range rs {
			out = append(out, run.Name+": "+rj.What())
		}
	}
	sort.Strings(out)
	if len(out) > 1000 {
		out = out[:1000]
	}
	return out
}

// overallVerdict is the comparison's verdict over its candidates (the
// worst of theirs: Regression, Inconclusive, Improvement, Pass) and each
// candidate's headline, a line each.
func overallVerdict(reports []*compare.Report) (benchv1.OverallVerdict, string) {
	rank := map[benchv1.OverallVerdict]int{benchv1.OverallPass: 0, benchv1.OverallImprovement: 1, benchv1.OverallInconclusive: 2,
		benchv1.OverallRegression: 3, benchv1.OverallInvalid: 4}
	v := benchv1.OverallPass
	var lines []string
	for _, rep := range reports {
		if rep.Summary == nil {
			continue
		}
		if rank[rep.Summary.Verdict] > rank[v] {
			v = rep.Summary.Verdict
		}
		lines = append(lines, rep.Summary.Headline)
	}
	if len(lines) == 0 {
		return benchv1.OverallInvalid, "INVALID — no candidate was compared"
	}
	return v, status.Truncate(strings.Join(lines, "\n"), 1024)
}
