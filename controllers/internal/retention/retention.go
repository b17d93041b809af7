// Package retention keeps a parent's results when it goes: the finalizer of
// a schedule or comparison with deletionPolicy Retain, and the release of
// its runs and ConfigMaps from the garbage collector.
package retention

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/status"
)

// Parent is what a parent (a schedule or a comparison) needs to keep its
// results when it is deleted with deletionPolicy Retain: its finalizer while
// it lives, and the release of its children when it goes.
type Parent struct {
	Client client.Client
	// Reader lists the children and reads the ConfigMaps past the cache
	// when the reconciler has an API reader.
	Reader client.Reader
	// Uncached: Reader is an API reader, not the cached client.
	Uncached bool
	Recorder record.EventRecorder
	Object   client.Object
	Kind     string // BenchmarkSchedule or BenchmarkComparison
	Policy   benchv1.DeletionPolicy
	Children func(ctx context.Context) ([]client.Object, error)
	// ConfigMaps are the parent's own ConfigMaps (a comparison's report),
	// released by name: the manager's cache holds only the ConfigMaps of
	// runs.
	ConfigMaps []string
}

// Handle keeps the finalizer in agreement with the policy and, once the
// parent is being deleted, releases its children (Retain) and removes the
// finalizer. stop says that the parent is being deleted: its reconcile
// does nothing else (it starts no run). A conflict with another writer
// returns an error and the next reconcile starts again from what is
// stored; a child already released is not touched twice.
func (r Parent) Handle(ctx context.Context) (stop bool, err error) {
	has := controllerutil.ContainsFinalizer(r.Object, benchv1.FinalizerReleaseResults)
	if r.Object.GetDeletionTimestamp() == nil {
		if want := r.Policy == benchv1.DeletionRetain; want != has {
			return false, r.setFinalizer(ctx, want)
		}
		return false, nil
	}
	if !has {
		return true, nil // Delete: the garbage collector takes the children
	}
	if r.Policy == benchv1.DeletionRetain {
		if err := r.release(ctx); err != nil {
			return true, err
		}
	}
	return true, r.setFinalizer(ctx, false)
}

func (r Parent) setFinalizer(ctx context.Context, want bool) error {
	base, ok := r.Object.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("%s %s: not a client.Object", r.Kind, r.Object.GetName())
	}
	if want {
		controllerutil.AddFinalizer(r.Object, benchv1.FinalizerReleaseResults)
	} else {
		controllerutil.RemoveFinalizer(r.Object, benchv1.FinalizerReleaseResults)
	}
	err := r.Client.Patch(ctx, r.Object, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsNotFound(err) && !want {
		return nil
	}
	if err != nil {
		return fmt.Errorf("while %s the finalizer %s of %s %s: %w", map[bool]string{true: "adding", false: "removing"}[want],
			benchv1.FinalizerReleaseResults, r.Kind, r.Object.GetName(), err)
	}
	return nil
}

// uncachedReader is the API reader, or nil.
func (r Parent) uncachedReader() client.Reader {
	if r.Uncached {
		return r.Reader
	}
	return nil
}

// releasedFrom is the value of the annotation on what the parent released.
func (r Parent) releasedFrom() string { return r.Kind + "/" + r.Object.GetName() }

// release removes the parent's owner reference from each of its children
// and marks them; the events say what stays. A pass that meets a conflict
// returns it and the next one goes on from what is stored: each child is
// released once (one event on it), and the parent's event, said by the
// pass that completes the release, counts every child released, by this
// pass or an earlier one.
func (r Parent) release(ctx context.Context) error {
	children, err := r.Children(ctx)
	if err != nil {
		return err
	}
	from := r.releasedFrom()
	var runs, inFlight, comparisons, configMaps, now int
	for _, child := range children {
		switch {
		case hasOwnerUID(child, r.Object.GetUID()):
			released, err := releaseObject(ctx, r.Client, child, r.Object.GetUID(), from)
			if err != nil {
				return err
			}
			if !released {
				continue
			}
			now++
			r.Recorder.Eventf(child, corev1.EventTypeNormal, benchv1.EventResultsReleased,
				"%s %s is being deleted with deletionPolicy Retain: released, this %s (annotation %s)", r.Kind, r.Object.GetName(), stays(child), benchv1.AnnotationReleasedFrom)
		case child.GetAnnotations()[benchv1.AnnotationReleasedFrom] != from:
			continue // not this parent's, or released by another
		}
		switch x := child.(type) {
		case *benchv1.BenchmarkRun:
			runs++
			if !x.Status.Phase.Terminal() {
				inFlight++
			}
		case *benchv1.BenchmarkComparison:
			comparisons++
		}
	}
	for _, name := range r.ConfigMaps {
		kept, released, err := releaseConfigMap(ctx, r.Client, r.uncachedReader(), r.Object.GetNamespace(), name, r.Object.GetUID(), from)
		if err != nil {
			return err
		}
		if released {
			now++
		}
		if kept {
			configMaps++
		}
	}
	if now == 0 {
		return nil
	}
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{runs, "BenchmarkRun"}, {comparisons, "BenchmarkComparison"}, {configMaps, "ConfigMap"}} {
		if p.n == 1 {
			parts = append(parts, "1 "+p.what)
		} else if p.n > 1 {
			parts = append(parts, fmt.Sprintf("%d %ss", p.n, p.what))
		}
	}
	msg := fmt.Sprintf("deletionPolicy Retain: released %s, which stay after this %s is deleted (annotation %s=%s)",
		strings.Join(parts, ", "), r.Kind, benchv1.AnnotationReleasedFrom, from)
	if inFlight > 0 {
		msg += fmt.Sprintf("; %d in progress run to completion", inFlight)
	}
	log.FromContext(ctx).Info("Released results", "runs", runs, "inProgress", inFlight, "comparisons", comparisons, "configMaps", configMaps)
	r.Recorder.Event(r.Object, corev1.EventTypeNormal, benchv1.EventResultsReleased, status.Truncate(msg, status.MaxEventMessage))
	return nil
}

// stays says what becomes of a released child.
func stays(child client.Object) string {
	switch x := child.(type) {
	case *benchv1.BenchmarkRun:
		if !x.Status.Phase.Terminal() {
			return "run stays and runs to completion"
		}
		return "run stays"
	case *benchv1.BenchmarkComparison:
		if !x.Status.Phase.Terminal() {
			return "comparison stays and goes on"
		}
		return "comparison stays"
	}
	return "object stays"
}

func hasOwnerUID(obj client.Object, uid types.UID) bool {
	return slices.ContainsFunc(obj.GetOwnerReferences(), func(ref metav1.OwnerReference) bool { return ref.UID == uid })
}

// releaseObject removes the owner reference to owner from obj and marks it
// released, with an optimistic lock; released says whether it wrote (an
// object without that reference is left as it is).
func releaseObject(ctx context.Context, c client.Client, obj client.Object, owner types.UID, from string) (released bool, err error) {
	refs := obj.GetOwnerReferences()
	kept := slices.DeleteFunc(slices.Clone(refs), func(ref metav1.OwnerReference) bool { return ref.UID == owner })
	if len(kept) == len(refs) {
		return false, nil
	}
	base, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return false, fmt.Errorf("while releasing %s: not a client.Object", obj.GetName())
	}
	obj.SetOwnerReferences(kept)
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[benchv1.AnnotationReleasedFrom] = from
	obj.SetAnnotations(ann)
	if err := c.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("while releasing %s: %w", obj.GetName(), err)
	}
	return true, nil
}

// releaseConfigMap releases a ConfigMap by name with a strategic merge
// patch that deletes the owner's reference by its UID: no other owner
// reference is touched, and a ConfigMap gone is left alone. The ConfigMap
// is read first past the cache (which holds only the ConfigMaps of runs)
// when there is a reader, so that one released already is not written
// again. kept: it exists and is released; released: by this call.
func releaseConfigMap(ctx context.Context, c client.Client, reader client.Reader, namespace, name string, owner types.UID, from string) (kept, released bool, err error) {
	if reader != nil {
		cur := &corev1.ConfigMap{}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cur); err != nil {
			if apierrors.IsNotFound(err) {
				return false, false, nil
			}
			return false, false, fmt.Errorf("while reading ConfigMap %s: %w", name, err)
		}
		if !hasOwnerUID(cur, owner) {
			return cur.Annotations[benchv1.AnnotationReleasedFrom] == from, false, nil
		}
	}
	patch := map[string]any{"metadata": map[string]any{
		"ownerReferences": []map[string]any{{"$patch": "delete", "uid": string(owner)}},
		"annotations":     map[string]string{benchv1.AnnotationReleasedFrom: from},
	}}
	raw, err := json.Marshal(patch)
	if err != nil {
		return false, false, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := c.Patch(ctx, cm, client.RawPatch(types.StrategicMergePatchType, raw)); err != nil {
		if apierrors.IsNotFound(err) {
			return false, false, nil
		}
		return false, false, fmt.Errorf("while releasing ConfigMap %s: %w", name, err)
	}
	return true, true, nil
}
