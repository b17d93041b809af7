package controllers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// storeMeasurement keeps a measurement's full result in the results ConfigMap
// before the status records it, so a restart can never lose it (storeOnce:
// the first stored result stands, which status then records).
func (r *BenchmarkRunReconciler) storeMeasurement(ctx context.Context, st *runState, u measurement, res *results.Result) (*results.Result, error) {
	step := st.run.Status.Steps[u.step].Name
	return r.storeOnce(ctx, st, specs.MeasurementKey(u.step, u.rep), res, func(d *specs.Document) *results.Result { return d.Result(step, u.rep) })
}

// storePrepare keeps the prepare step's result, as storeMeasurement a measurement's.
func (r *BenchmarkRunReconciler) storePrepare(ctx context.Context, st *runState, res *results.Result) (*results.Result, error) {
	return r.storeOnce(ctx, st, specs.PrepareKey, res, func(d *specs.Document) *results.Result { return d.Prepare })
}

// storeOnce stores res under key unless the ConfigMap already holds that
// result, under the key or in the document a finish wrote (which took the
// key's result and removed the key; that finish's status write may have
// been refused, so the result is recorded again). The first stored result
// stands: a reconcile that computes it again (its status write lost to a
// conflict, or a new manager after a restart) may know less of it (the
// kubelet's samples live in the manager's memory). It returns what is
// stored. An unreadable earlier result is replaced.
func (r *BenchmarkRunReconciler) storeOnce(ctx context.Context, st *runState, key string, res *results.Result,
	inDocument func(*specs.Document) *results.Result) (*results.Result, error) {
	stored := res
	packed, err := results.Pack(res)
	if err != nil {
		return nil, err
	}
	err = r.updateResults(ctx, st, func(cm *corev1.ConfigMap) error {
		if have, ok := cm.BinaryData[key]; ok {
			if earlier, err := results.Unpack(have); err == nil {
				stored = earlier
				return errUnchanged
			}
		}
		if doc, err := specs.ReadDocument(cm); err == nil && doc != nil {
			if earlier := inDocument(doc); earlier != nil {
				stored = earlier
				return errUnchanged
			}
		}
		if cm.BinaryData == nil {
			cm.BinaryData = map[string][]byte{}
		}
		cm.BinaryData[key] = packed
		return nil
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	return stored, err
}

// errUnchanged stops updateResults without a write.
var errUnchanged = errors.New("unchanged")

// updateResults creates or changes the results ConfigMap. change works on
// the very version that is written back (the update is refused if another
// write came in between), so what it reads of the ConfigMap is current.
// The first attempt reads the cache; when the cache was behind (a create
// answered AlreadyExists, an update Conflict: the write of an earlier
// reconcile not yet seen), the ConfigMap is read from the API server and
// the change applied to it again, instead of failing the reconcile with a
// "Reconciler error" and a backoff.
func (r *BenchmarkRunReconciler) updateResults(ctx context.Context, st *runState, change func(*corev1.ConfigMap) error) error {
	key := client.ObjectKey{Namespace: st.run.Namespace, Name: specs.ResultsConfigMapName(st.run)}
	var reader client.Reader = r.Client
	if st.results != nil {
		// Written by this reconcile: newer than the cache can be.
		reader = written{st.results}
	}
	for attempt := 0; ; attempt++ {
		err := r.updateResultsOnce(ctx, reader, st, key, change)
		if attempt == 2 || (!apierrors.IsAlreadyExists(err) && !apierrors.IsConflict(err)) {
			return err
		}
		if r.APIReader != nil {
			reader = r.APIReader
		}
	}
}

func (r *BenchmarkRunReconciler) updateResultsOnce(ctx context.Context, reader client.Reader, st *runState, key client.ObjectKey,
	change func(*corev1.ConfigMap) error) error {
	cm := &corev1.ConfigMap{}
	err := reader.Get(ctx, key, cm)
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: specs.ObjectMeta(st.run, key.Name, benchv1.RoleResults)}
		if err := change(cm); err != nil {
			return err
		}
		if err := r.Create(ctx, cm); err != nil {
			return fmt.Errorf("while creating the results configmap: %w", err)
		}
		st.results = cm.DeepCopy()
		return nil
	}
	if err != nil {
		return err
	}
	if err := change(cm); err != nil {
		return err
	}
	if err := r.Update(ctx, cm); err != nil {
		return fmt.Errorf("while updating the results configmap: %w", err)
	}
	st.results = cm.DeepCopy()
	return nil
}

// written reads the one ConfigMap this reconcile wrote last.
type written struct{ cm *corev1.ConfigMap }

func (w written) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || key != client.ObjectKeyFromObject(w.cm) {
		return fmt.Errorf("the results ConfigMap written is %s, not %s", client.ObjectKeyFromObject(w.cm), key)
	}
	w.cm.DeepCopyInto(cm)
	return nil
}

func (w written) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("only the results ConfigMap written can be read")
}

// unpackMeasurements reads the stored measurements of a results ConfigMap.
func unpackMeasurements(cm *corev1.ConfigMap) (map[string]*results.Result, error) {
	out := map[string]*results.Result{}
	for k, v := range cm.BinaryData {
		if !specs.IsMeasurementKey(k) {
			continue
		}
		res, err := results.Unpack(v)
		if err != nil {
			return nil, fmt.Errorf("while reading %s of the results configmap: %w", k, err)
		}
		out[k] = res
	}
	return out, nil
}
