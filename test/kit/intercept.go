package kit

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// Intercept stands funcs between a reconciler and the API server
// (controller-runtime's interceptor): to refuse a write with a conflict,
// to write the object first as another client would, to serve an older
// read, or to keep what was written.
func Intercept(c client.Client, funcs interceptor.Funcs) client.Client {
	return interceptor.NewClient(noWatch{c}, funcs)
}

// noWatch is a manager's client as the interceptor takes it: the manager's
// watches go through its cache, never through its client.
type noWatch struct{ client.Client }

func (noWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("a manager's client does not watch")
}

// Conflict is the API server's refusal of a write to the API's resource
// (benchmarkruns, benchmarkcomparisons, benchmarkschedules) whose version
// someone else changed meanwhile.
func Conflict(resource, name string) error {
	return apierrors.NewConflict(schema.GroupResource{Group: benchv1.GroupVersion.Group, Resource: resource}, name, errors.New("changed meanwhile"))
}
