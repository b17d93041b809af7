package targets

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// A StatefulSet the reconcile has just created is not in the manager's
// cache yet: the target waits for it (its creation event brings the run
// back) instead of failing the reconcile, which would be logged as a
// reconciler error and retried with a backoff (seen on every Valkey target
// of the chaos test, test/e2e).
func TestServerTargetWaitsForItsStatefulSetToReachTheCache(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	lagging := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(*appsv1.StatefulSet); ok {
			return apierrors.NewNotFound(appsv1.Resource("statefulsets"), key.Name)
		}
		return c.Get(ctx, key, obj, opts...)
	}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(lagging).Build()
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "perf", UID: "u"},
		Spec: benchv1.BenchmarkRunSpec{Target: benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}}}}
	p, err := For(run)
	if err != nil {
		t.Fatal(err)
	}
	o, err := p.Ensure(context.Background(), c, run, Needs{})
	if err != nil || o.Ready || o.Reason != benchv1.ReasonProvisioning {
		t.Fatalf("Ensure with the StatefulSet not in the cache yet: ready %v, reason %q, %q, error %v; want waiting, no error", o.Ready, o.Reason, o.Message, err)
	}
	var list appsv1.StatefulSetList
	if err := c.List(context.Background(), &list); err != nil || len(list.Items) != 1 {
		t.Fatalf("%d StatefulSets created (%v), want 1", len(list.Items), err)
	}
}
