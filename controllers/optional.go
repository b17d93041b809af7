package controllers

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/targets"
)

// Optional integrations: the foreign kinds the targets own
// (targets.ForeignOwner: CloudNativePG's Cluster) may have their CRD
// installed before the operator or after it. The run controller watches
// those served at start-up from the start; optionalKinds watches the CRDs
// of the others (their metadata, by name) and, once the API server serves
// a kind, adds the run controller's watch of it at run time and wakes the
// runs that waited for it (TargetReady=False, reason CRDNotInstalled). So
// the install order does not matter and no restart is needed.

// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch

// crdGVK is CustomResourceDefinition, read for its metadata only.
var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// crdRecheck is how often a CRD that exists but whose kind the API server
// does not serve yet (discovery lags the CRD's Established condition) is
// looked at again, for its first minute; pollInterval after that.
const crdRecheck = 200 * time.Millisecond

func crdMeta() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(crdGVK)
	return m
}

// crdName is the name of the CRD that serves gvk: its resource, by the
// API's naming convention, and its group.
func crdName(gvk schema.GroupVersionKind) string {
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.Resource + "." + gvk.Group
}

// optionalCRDs caches the metadata of the owned kinds' CRDs without their
// annotations (kubectl apply's copy of the whole CRD) and managed fields;
// with one owned kind, of its CRD alone.
func optionalCRDs() cache.ByObject {
	by := cache.ByObject{Transform: stripMetadata}
	if kinds := targets.OwnedKinds(); len(kinds) == 1 {
		by.Field = fields.OneTermEqualSelector("metadata.name", crdName(kinds[0]))
	}
	return by
}

func stripMetadata(o any) (any, error) {
	if m, ok := o.(*metav1.PartialObjectMetadata); ok {
		m.Annotations, m.ManagedFields = nil, nil
	}
	return o, nil
}

// ownedSource is the run controller's watch of a kind its runs own: their
// Cluster's status changes wake the run.
func ownedSource(mgr ctrl.Manager, gvk schema.GroupVersionKind) source.Source {
	owned := &unstructured.Unstructured{}
	owned.SetGroupVersionKind(gvk)
	return source.Kind[client.Object](mgr.GetCache(), owned,
		handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &benchv1.BenchmarkRun{}, handler.OnlyControllerOwner()))
}

// optionalKinds reconciles the owned kinds' CRDs (see above).
type optionalKinds struct {
	client.Reader
	mapper meta.RESTMapper
	// watch adds the run controller's watch of a kind.
	watch func(schema.GroupVersionKind) error
	// wake reconciles a run in the run controller.
	wake chan<- event.GenericEvent

	mu sync.Mutex
	// pending are the owned kinds not watched yet.
	pending []schema.GroupVersionKind
}

// setupOptionalKinds watches the CRDs of the owned kinds for the run
// controller c, which watches served already.
func setupOptionalKinds(mgr ctrl.Manager, c controller.Controller, served []schema.GroupVersionKind, wake chan<- event.GenericEvent) error {
	all := targets.OwnedKinds()
	if len(all) == 0 {
		return nil
	}
	o := &optionalKinds{Reader: mgr.GetClient(), mapper: mgr.GetRESTMapper(), wake: wake,
		watch:   func(gvk schema.GroupVersionKind) error { return c.Watch(ownedSource(mgr, gvk)) },
		pending: slices.DeleteFunc(slices.Clone(all), func(g schema.GroupVersionKind) bool { return slices.Contains(served, g) })}
	names := map[string]bool{}
	for _, gvk := range all {
		names[crdName(gvk)] = true
	}
	named := predicate.NewPredicateFuncs(func(o client.Object) bool { return names[o.GetName()] })
	return ctrl.NewControllerManagedBy(mgr).For(crdMeta(), builder.WithPredicates(named)).Named("optionalcrds").Complete(o)
}

// Reconcile watches the kinds of a CRD the API server now serves and wakes
// the runs waiting for a CRD. It wakes them on every event of an owned
// kind's CRD, watched already or not: a CRD deleted and installed again
// brings no new watch but ends their wait.
func (o *optionalKinds) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	crd := crdMeta()
	if err := o.Get(ctx, req.NamespacedName, crd); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	notYet, err := o.watchServed(ctx, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if notYet {
		if time.Since(crd.CreationTimestamp.Time) > time.Minute {
			return ctrl.Result{RequeueAfter: pollInterval}, nil
		}
		return ctrl.Result{RequeueAfter: crdRecheck}, nil
	}
	return ctrl.Result{}, o.wakeWaiting(ctx)
}

// watchServed adds the watch of each pending kind of the CRD that the API
// server serves; notYet says one is not served yet. Once per kind: under
// the lock, a watched kind leaves pending.
func (o *optionalKinds) watchServed(ctx context.Context, crd string) (notYet bool, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, gvk := range slices.Clone(o.pending) {
		if crdName(gvk) != crd {
			continue
		}
		served, err := targets.Served(o.mapper, gvk)
		if err != nil {
			return true, err
		}
		if !served {
			notYet = true
			continue
		}
		if err := o.watch(gvk); err != nil {
			return notYet, err
		}
		o.pending = slices.DeleteFunc(o.pending, func(g schema.GroupVersionKind) bool { return g == gvk })
		log.FromContext(ctx).Info("Watching a target kind whose CRD was installed after the manager started", "kind", gvk.String())
	}
	return notYet, nil
}

// wakeWaiting reconciles the runs whose target waits for a CRD.
func (o *optionalKinds) wakeWaiting(ctx context.Context) error {
	var runs benchv1.BenchmarkRunList
	if err := o.List(ctx, &runs, client.MatchingFields{indexPhase: string(benchv1.PhaseProvisioning)}); err != nil {
		return err
	}
	for i := range runs.Items {
		c := findCondition(&runs.Items[i], benchv1.ConditionTargetReady)
		if c == nil || c.Reason != benchv1.ReasonCRDNotInstalled {
			continue
		}
		select {
		case o.wake <- event.GenericEvent{Object: &runs.Items[i]}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
