package workloads

// What a tool's spec implies for the rest of a run, said by the tool so that
// the API server can check it before the operator sees the run: the CEL
// rules of BenchmarkRunSpec that count a run's measurements and match a
// tool's database to its target are generated from these (hack/toolrules,
// run by `make manifests`), so a new tool changes them by saying so here,
// not by editing a rule by hand.

// SweptList is one list of a tool's spec each of whose values is a step of
// its sweep (Steps).
type SweptList struct {
	// Field is the list as the tool's spec spells it in JSON: "clients".
	Field string
	// Each, when set, makes Field a list of objects that each sweep a list
	// of their own of this name (custom.parameters[*].values): the steps
	// are the product of their lengths.
	Each string
	// MaxItems is the most objects Field holds (its schema's maxItems),
	// when Each is set: CEL has no product over a list, so the generated
	// rule multiplies that many terms.
	MaxItems int
}

// Sweeper is implemented by tools whose steps are the product of the
// lengths of lists in their spec, in any order, an absent or empty list
// counting one: len(Steps(spec)) is that product. A tool that does not
// implement it has one step.
type Sweeper interface {
	SweptLists() []SweptList
}

// TargetKindNamer is implemented by tools whose spec names the kind of
// database they drive, spelled as spec.target spells its kinds (HammerDB's
// database, postgres or mysql): when it is set and the target is not
// external, it must be the target's kind.
type TargetKindNamer interface {
	// TargetKindField is that field as the tool's spec spells it in JSON.
	TargetKindField() string
}
