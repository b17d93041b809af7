package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// The rules are evaluated with cel-go on the spec as JSON, as the API
// server sees it: that compares the count itself, not one side of the
// bound, over every combination of list lengths, in milliseconds. That the
// API server applies the rule is controllers' admission test.

const root = "../.."

// The API holds the generator's output: `go test` says so before `make
// verify` does.
func TestTheAPIHoldsTheGeneratedRules(t *testing.T) {
	src, err := os.ReadFile(root + "/api/v1alpha1/benchmarkrun_types.go")
	if err != nil {
		t.Fatal(err)
	}
	block, err := generated()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), block) {
		t.Errorf("api/v1alpha1/benchmarkrun_types.go does not hold the rules of today's registry: run `make manifests`")
	}
}

// For every tool, the rule counts the measurements the tool makes:
// len(Steps(spec)) × repetitions. Every list of integers of the tool's spec
// is varied, not only those it says it sweeps, so that a list it sweeps
// without saying so (SweptLists) fails here.
func TestTheRuleCountsEveryToolsMeasurements(t *testing.T) {
	count := compile(t, measurementCount(registry.Tools()))
	for _, tool := range registry.Tools() {
		t.Run(tool.Field, func(t *testing.T) {
			cases := 0
			for _, lists := range combinations(listsOf(t, tool)) {
				for _, reps := range []int64{0, 1, 7} {
					spec, self := specOf(t, tool.Field, lists, reps)
					want := int64(len(tool.Workload.Steps(spec))) * max(reps, 1)
					got, err := eval(count, self)
					if err != nil || got != want {
						t.Errorf("%s, repetitions %d (0: absent): the rule counts %v (%v), the tool %d", lists, reps, got, err, want)
					}
					cases++
				}
			}
			t.Logf("%d cases", cases)
		})
	}
}

// A list of objects is multiplied up to its schema's maxItems, which the
// tool says: the schema must agree.
func TestSweptListsOfObjectsHaveTheSchemasMaxItems(t *testing.T) {
	workload := crdWorkload(t)
	for _, tool := range registry.Tools() {
		s, ok := tool.Workload.(workloads.Sweeper)
		if !ok {
			continue
		}
		for _, l := range s.SweptLists() {
			if l.Each == "" {
				continue
			}
			got := dig(workload, "properties", tool.Field, "properties", l.Field, "maxItems")
			if got != float64(l.MaxItems) {
				t.Errorf("%s.%s: maxItems %v in the CRD, %d in SweptLists", tool.Field, l.Field, got, l.MaxItems)
			}
		}
	}
}

// A tool's field naming a kind of database, when set, must name the
// target's kind, unless the target is external.
func TestTheTargetKindRules(t *testing.T) {
	kinds, err := targetKinds()
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, tool := range registry.Tools() {
		n, ok := tool.Workload.(workloads.TargetKindNamer)
		if !ok {
			continue
		}
		named++
		r := targetKindRule(tool.Field, n.TargetKindField(), kinds)
		prg := compile(t, r.Rule)
		for _, target := range append([]string{externalKind}, kinds...) {
			for _, value := range append([]string{""}, kinds...) {
				toolSpec := map[string]any{}
				if value != "" {
					toolSpec[n.TargetKindField()] = value
				}
				self := map[string]any{"target": map[string]any{target: map[string]any{}}, "workload": map[string]any{tool.Field: toolSpec}}
				want := value == "" || target == externalKind || value == target
				out, _, err := prg.Eval(map[string]any{"self": self})
				if err != nil || out.Value() != want {
					t.Errorf("%s.%s %q on a %s target: %v (%v), want %v", tool.Field, n.TargetKindField(), value, target, out, err, want)
				}
			}
		}
	}
	if named == 0 {
		t.Fatal("no tool names a kind of database: is the test looking at the right interface?")
	}
}

// list is one list of integers of a tool's spec: Field's values, or, with
// Each, Field's objects' Each values.
type list struct {
	field, each string
	maxItems    int
}

// listsOf finds every list of integers of the tool's spec by reflection.
func listsOf(t *testing.T, tool registry.Tool) []list {
	t.Helper()
	member, ok := fieldByJSON(reflect.TypeOf(benchv1.WorkloadSpec{}), tool.Field)
	if !ok {
		t.Fatalf("WorkloadSpec has no %s", tool.Field)
	}
	declared := map[string]int{}
	if s, ok := tool.Workload.(workloads.Sweeper); ok {
		for _, l := range s.SweptLists() {
			declared[l.Field] = l.MaxItems
		}
	}
	ints := reflect.TypeOf([]int32{})
	var out []list
	typ := member.Type.Elem()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name := jsonName(f)
		switch {
		case f.Type == ints:
			out = append(out, list{field: name})
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			for j := range f.Type.Elem().NumField() {
				if g := f.Type.Elem().Field(j); g.Type == ints {
					n := declared[name]
					if n == 0 {
						n = 3
					}
					out = append(out, list{field: name, each: jsonName(g), maxItems: n})
				}
			}
		}
	}
	return out
}

// setting is one list's value in a case: absent (nil), or lengths, one
// per object for a list of objects.
type setting struct {
	list    list
	lengths []int
}

func (s setting) String() string {
	if s.lengths == nil {
		return s.list.field + " absent"
	}
	return fmt.Sprintf("%s %v", s.list.field, s.lengths)
}

// combinations of settings of the lists: absent, empty, one value or
// three; a list of objects from none to maxItems of them, of two to four
// values each.
func combinations(lists []list) [][]setting {
	out := [][]setting{nil}
	for _, l := range lists {
		options := [][]int{nil, {}}
		if l.each == "" {
			options = append(options, []int{1}, []int{3})
		} else {
			for n := 1; n <= l.maxItems; n++ {
				lengths := make([]int, n)
				for i := range lengths {
					lengths[i] = 2 + i%3
				}
				options = append(options, lengths)
			}
		}
		var next [][]setting
		for _, prefix := range out {
			for _, o := range options {
				next = append(next, append(append([]setting{}, prefix...), setting{l, o}))
			}
		}
		out = next
	}
	return out
}

// specOf is one case as the tool sees it and as CEL does.
func specOf(t *testing.T, field string, settings []setting, reps int64) (*benchv1.WorkloadSpec, map[string]any) {
	t.Helper()
	toolSpec := map[string]any{}
	for _, s := range settings {
		switch {
		case s.lengths == nil:
		case s.list.each == "":
			toolSpec[s.list.field] = values(s.lengths)
		default:
			objects := []any{}
			for _, n := range s.lengths {
				objects = append(objects, map[string]any{s.list.each: values([]int{n})})
			}
			toolSpec[s.list.field] = objects
		}
	}
	self := map[string]any{"workload": map[string]any{field: toolSpec}}
	if reps > 0 {
		self["repetitions"] = reps
	}
	raw, err := json.Marshal(self["workload"])
	if err != nil {
		t.Fatal(err)
	}
	spec := &benchv1.WorkloadSpec{}
	if err := json.Unmarshal(raw, spec); err != nil {
		t.Fatal(err)
	}
	return spec, self
}

// values is a list of as many integers as the one length given; none
// when none is.
func values(lengths []int) []any {
	out := []any{}
	if len(lengths) == 0 {
		return out
	}
	for i := range lengths[0] {
		out = append(out, int64(i+1))
	}
	return out
}

func compile(t *testing.T, expr string) cel.Program {
	t.Helper()
	env, err := cel.NewEnv(cel.Variable("self", cel.DynType))
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("%s: %v", expr, iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	return prg
}

func eval(prg cel.Program, self map[string]any) (int64, error) {
	out, _, err := prg.Eval(map[string]any{"self": self})
	if err != nil {
		return 0, err
	}
	n, ok := out.Value().(int64)
	if !ok {
		return 0, fmt.Errorf("not an integer: %v", out)
	}
	return n, nil
}

// crdWorkload is the schema of spec.workload in the generated CRD.
func crdWorkload(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(root + "/config/crd/bases/bench.dbperf.io_benchmarkruns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	versions, _ := dig(crd, "spec", "versions").([]any)
	if len(versions) != 1 {
		t.Fatalf("%d versions", len(versions))
	}
	w, _ := dig(versions[0], "schema", "openAPIV3Schema", "properties", "spec", "properties", "workload").(map[string]any)
	if w == nil {
		t.Fatal("no spec.workload in the CRD")
	}
	return w
}

func dig(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func fieldByJSON(typ reflect.Type, name string) (reflect.StructField, bool) {
	for i := range typ.NumField() {
		if jsonName(typ.Field(i)) == name {
			return typ.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}
