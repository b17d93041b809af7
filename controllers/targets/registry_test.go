package targets

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// apiKinds are TargetSpec's one-of members: JSON name → Go field.
func apiKinds() map[string]string { return testutil.TargetKindFields() }

// withKind is a run whose spec.target sets the given Go fields.
func withKind(fields ...string) *benchv1.BenchmarkRun {
	run := &benchv1.BenchmarkRun{}
	v := reflect.ValueOf(&run.Spec.Target).Elem()
	for _, name := range fields {
		f := v.FieldByName(name)
		f.Set(reflect.New(f.Type().Elem()))
	}
	return run
}

// Every kind of the API has a line in the registry, under its own name,
// and the registry has no kind the API lacks.
func TestRegistryCoversEveryKindOfTheAPI(t *testing.T) {
	var want []string
	for json, field := range apiKinds() {
		want = append(want, json)
		run := withKind(field)
		p, err := For(run)
		if err != nil {
			t.Errorf("spec.target.%s: %v", json, err)
			continue
		}
		if p.Kind() != json || Kind(run) != json {
			t.Errorf("spec.target.%s: provisioner says kind %q, Kind(run) %q", json, p.Kind(), Kind(run))
		}
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, Kinds()); diff != "" {
		t.Errorf("Kinds() (-API +registry):\n%s", diff)
	}
}

// A spec that selects no kind or several is an error naming spec.target
// and the kinds, never a default kind.
func TestForRefusesNoKindOrSeveral(t *testing.T) {
	for name, tc := range map[string]struct {
		fields []string
		want   string
	}{
		"no kind":               {nil, "found 0"},
		"two kinds":             {[]string{"Valkey", "MySQL"}, "found 2 [valkey mysql]"},
		"every kind":            {[]string{"Postgres", "Valkey", "MySQL", "MongoDB", "OpenSearch", "External"}, "found 6"},
		"external and postgres": {[]string{"External", "Postgres"}, "found 2 [postgres external]"},
	} {
		t.Run(name, func(t *testing.T) {
			run := withKind(tc.fields...)
			p, err := For(run)
			if err == nil {
				t.Fatalf("For chose %s", p.Kind())
			}
			for _, s := range append([]string{"spec.target: exactly one of", tc.want}, Kinds()...) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if k := Kind(run); k != "" {
				t.Errorf("Kind = %q, want none", k)
			}
		})
	}
}

// Only a target the run does not own has no pods here (its placement is moot).
func TestRunsPods(t *testing.T) {
	for json, field := range apiKinds() {
		if got, want := RunsPods(withKind(field)), json != "external"; got != want {
			t.Errorf("spec.target.%s: RunsPods = %v, want %v", json, got, want)
		}
	}
}

// The workloads say what they need of a target through
// workloads.TargetNeeds: HammerDB's schema build needs an administrator,
// no other tool does.
func TestNeedsOfEveryTool(t *testing.T) {
	for _, name := range registry.Names() {
		w, err := registry.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		got := NeedsOf(w, &benchv1.WorkloadSpec{})
		if want := (Needs{Administrator: name == "hammerdb"}); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
}
