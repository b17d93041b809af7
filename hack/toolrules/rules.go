package main

import (
	"fmt"
	"reflect"
	"strings"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// rule is one x-kubernetes-validations rule of BenchmarkRunSpec.
type rule struct {
	Rule, Message string
}

// externalKind is the target kind that is no kind of database: an
// endpoint the operator does not provision, whatever it speaks.
const externalKind = "external"

// rules are the generated rules of BenchmarkRunSpec: each tool's database
// against the target's kind, then the number of measurements.
func rules(tools []registry.Tool, kinds []string) []rule {
	var out []rule
	for _, t := range tools {
		if n, ok := t.Workload.(workloads.TargetKindNamer); ok {
			out = append(out, targetKindRule(t.Field, n.TargetKindField(), kinds))
		}
	}
	return append(out, rule{
		Rule: measurementCount(tools) + fmt.Sprintf(" <= %d", benchv1.MaxMeasurements),
		Message: fmt.Sprintf("a run makes at most %d measurements (MaxMeasurements): repetitions times the steps of the workload's sweep, "+
			"which are the product of the lengths of its swept lists (%s)", benchv1.MaxMeasurements, sweptListsInWords(tools)),
	})
}

// targetKindRule: a tool's field naming a kind of database, when set, is
// the kind of a provisioned target. Every kind of spec.target is listed,
// so that a new kind is refused until the field can name it.
func targetKindRule(tool, field string, kinds []string) rule {
	named := "self.workload." + tool + "." + field
	terms := []string{"!has(self.workload." + tool + ")", "!has(" + named + ")", "has(self.target." + externalKind + ")"}
	for _, k := range kinds {
		terms = append(terms, fmt.Sprintf("(has(self.target.%s) && %s == '%s')", k, named, k))
	}
	return rule{Rule: strings.Join(terms, " || "),
		Message: fmt.Sprintf("workload.%s.%s must be the target's kind (or the target %s)", tool, field, externalKind)}
}

// measurementCount is the CEL expression of a run's measurements:
// repetitions times the product of the lengths of the swept lists of the
// tool the spec sets (SweptLists), one for a tool that sweeps none.
func measurementCount(tools []registry.Tool) string {
	var steps strings.Builder
	for _, t := range tools {
		s, ok := t.Workload.(workloads.Sweeper)
		if !ok {
			continue
		}
		var factors []string
		for _, l := range s.SweptLists() {
			factors = append(factors, listFactors("self.workload."+t.Field+"."+l.Field, l)...)
		}
		fmt.Fprintf(&steps, "has(self.workload.%s) ? %s : ", t.Field, strings.Join(factors, " * "))
	}
	return "(has(self.repetitions) ? self.repetitions : 1) * (" + steps.String() + "1)"
}

// listFactors are the terms a swept list multiplies the steps by: its
// length, or one when it is absent or empty (Sweep skips a dimension
// without values); for a list of objects each sweeping its own list, the
// lengths of theirs, up to its maxItems.
func listFactors(list string, l workloads.SweptList) []string {
	if l.Each == "" {
		return []string{atLeastOne(list, list)}
	}
	out := make([]string, 0, l.MaxItems)
	for i := range l.MaxItems {
		item := fmt.Sprintf("%s[%d].%s", list, i, l.Each)
		out = append(out, atLeastOne(fmt.Sprintf("has(%s) && size(%s) > %d && has(%s)", list, list, i, item), item))
	}
	return out
}

// atLeastOne is the length of list, or one unless cond (has(list) by
// default) holds and the list has values.
func atLeastOne(cond, list string) string {
	if cond == list {
		cond = "has(" + list + ")"
	}
	return fmt.Sprintf("(%s && size(%s) > 0 ? size(%s) : 1)", cond, list, list)
}

// sweptListsInWords names the swept lists of every tool for the rule's
// message: "pgbench.clients; memtier.threads × memtier.pipeline; ...".
func sweptListsInWords(tools []registry.Tool) string {
	var perTool []string
	for _, t := range tools {
		s, ok := t.Workload.(workloads.Sweeper)
		if !ok {
			continue
		}
		var lists []string
		for _, l := range s.SweptLists() {
			name := t.Field + "." + l.Field
			if l.Each != "" {
				name = "the " + l.Each + " of every " + name
			}
			lists = append(lists, name)
		}
		perTool = append(perTool, strings.Join(lists, " × "))
	}
	return strings.Join(perTool, "; ")
}

// targetKinds are the kinds of spec.target that are kinds of database (all
// but external), as JSON spells them, in the order of TargetSpec.
func targetKinds() ([]string, error) {
	var kinds []string
	external := false
	typ := reflect.TypeOf(benchv1.TargetSpec{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		// The one-of members; a Placement says where, not what.
		if f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct || f.Type.Elem() == reflect.TypeOf(benchv1.Placement{}) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case externalKind:
			external = true
		default:
			kinds = append(kinds, name)
		}
	}
	if !external || len(kinds) == 0 {
		return nil, fmt.Errorf("TargetSpec has no %s member or no kinds (%v)", externalKind, kinds)
	}
	return kinds, nil
}
