package targets

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// entry is one target kind: the TargetSpec field that selects it and the
// provisioner that brings it up.
type entry struct {
	selected    func(*benchv1.TargetSpec) bool
	provisioner Provisioner
}

// entries is the one list of target kinds. Adding a kind adds a line here,
// its file in this package (and its builder in internal/specs) and its
// field in TargetSpec; nothing else.
var entries = []entry{
	{func(t *benchv1.TargetSpec) bool { return t.Postgres != nil }, Postgres{}},
	{func(t *benchv1.TargetSpec) bool { return t.Valkey != nil }, serverTarget{valkeyServer{}}},
	{func(t *benchv1.TargetSpec) bool { return t.MySQL != nil }, serverTarget{mysqlServer{}}},
	{func(t *benchv1.TargetSpec) bool { return t.MongoDB != nil }, serverTarget{mongodbServer{}}},
	{func(t *benchv1.TargetSpec) bool { return t.OpenSearch != nil }, serverTarget{opensearchServer{}}},
	{func(t *benchv1.TargetSpec) bool { return t.ClickHouse != nil }, ClickHouse{}},
	{func(t *benchv1.TargetSpec) bool { return t.External != nil }, External{}},
}

// For returns the provisioner of the run's target kind. A spec that sets
// no kind or several is an error: the reconciler reports it on the run
// rather than guessing.
func For(run *benchv1.BenchmarkRun) (Provisioner, error) {
	p, err := find(run)
	if err != nil {
		return nil, err
	}
	return refusalAsCondition{p}, nil
}

// find is the provisioner of the run's target kind as registered, its
// optional interfaces visible.
func find(run *benchv1.BenchmarkRun) (Provisioner, error) {
	var found []Provisioner
	for _, e := range entries {
		if e.selected(&run.Spec.Target) {
			found = append(found, e.provisioner)
		}
	}
	if len(found) != 1 {
		var set []string
		for _, p := range found {
			set = append(set, p.Kind())
		}
		return nil, fmt.Errorf("spec.target: exactly one of %s must be set, found %d %v", strings.Join(Kinds(), ", "), len(found), set)
	}
	return found[0], nil
}

// Kind names the run's target kind as spec.target spells it, or "" when
// the spec does not select exactly one.
func Kind(run *benchv1.BenchmarkRun) string {
	p, err := For(run)
	if err != nil {
		return ""
	}
	return p.Kind()
}

// Kinds lists the known target kinds.
func Kinds() []string {
	var kinds []string
	for _, e := range entries {
		kinds = append(kinds, e.provisioner.Kind())
	}
	sort.Strings(kinds)
	return kinds
}

// RunsPods says whether the run's target has pods in this cluster, which
// its placement then places; an endpoint the run does not own has none.
func RunsPods(run *benchv1.BenchmarkRun) bool {
	p, err := find(run)
	if err != nil {
		return false
	}
	_, remote := p.(notHere)
	return !remote
}

// notHere is implemented by kinds whose database the run does not run.
type notHere interface{ notHere() }

// ForeignOwner is implemented by provisioners whose target is an object of
// another operator's API (CloudNativePG's Cluster): the run controller
// watches these kinds, so their status changes wake the run, from the
// manager's start or from when their CRD is installed.
type ForeignOwner interface {
	OwnedKinds() []schema.GroupVersionKind
}

// OwnedKinds lists the foreign kinds the registered provisioners own.
func OwnedKinds() []schema.GroupVersionKind {
	var kinds []schema.GroupVersionKind
	for _, e := range entries {
		if fo, ok := e.provisioner.(ForeignOwner); ok {
			kinds = append(kinds, fo.OwnedKinds()...)
		}
	}
	return kinds
}

// ServedOwnedKinds lists the foreign kinds the registered provisioners own
// that the API server serves, and those it does not (their targets report
// the CRD missing on the run).
func ServedOwnedKinds(mapper meta.RESTMapper) (served, missing []schema.GroupVersionKind, err error) {
	for _, gvk := range OwnedKinds() {
		ok, err := Served(mapper, gvk)
		switch {
		case err != nil:
			return nil, nil, err
		case ok:
			served = append(served, gvk)
		default:
			missing = append(missing, gvk)
		}
	}
	return served, missing, nil
}

// Served says whether the API server serves gvk. controller-runtime's
// RESTMapper asks discovery again on every miss, so a CRD installed since
// the last look is found.
func Served(mapper meta.RESTMapper, gvk schema.GroupVersionKind) (bool, error) {
	_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case meta.IsNoMatchError(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("while looking for %s: %w", gvk, err)
	}
	return true, nil
}
