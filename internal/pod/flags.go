package pod

import (
	"flag"
	"io"
	"time"
)

// flagTable binds the fields of one command line to their flags, in the
// order the operator writes them. Rendering and parsing read the same
// table, so that a flag has one name, one type and one default on both
// sides of the pod.
type flagTable struct {
	// parsing sets each field to its default as it is bound; rendering
	// leaves the fields as they are.
	parsing bool
	flags   []boundFlag
}

type boundFlag struct {
	name, usage string
	value       flagValue
}

// flagValue is a field behind a flag: flag.Value parses it, args renders
// it back.
type flagValue interface {
	flag.Value
	// args are the flag's arguments for the field's value: none when the
	// field is zero (the runner's default then applies).
	args(name string) []string
}

// bind adds a field, set to def first when parsing.
func bind[T any](t *flagTable, p *T, def T, v flagValue, name, usage string) {
	if t.parsing {
		*p = def
	}
	t.flags = append(t.flags, boundFlag{name: name, usage: usage, value: v})
}

func (t *flagTable) render() []string {
	var out []string
	for _, f := range t.flags {
		out = append(out, f.value.args(f.name)...)
	}
	return out
}

// parse reads args into the bound fields and returns what follows them
// (after `--`). Errors and -h go to output, as the flag package prints them.
func (t *flagTable) parse(command string, args []string, output io.Writer) ([]string, error) {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	fs.SetOutput(output)
	for _, f := range t.flags {
		fs.Var(f.value, f.name, f.usage)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return fs.Args(), nil
}

// flagArgs renders one flag with a value.
func flagArgs(name, value string) []string {
	return []string{"--" + name, value}
}

// The bindings of each kind of field, in the flag package's order of
// arguments.

func (t *flagTable) str(p *string, name, def, usage string) {
	bind(t, p, def, (*stringValue)(p), name, usage)
}

func (t *flagTable) integer(p *int, name string, def int, usage string) {
	bind(t, p, def, (*intValue)(p), name, usage)
}

func (t *flagTable) float(p *float64, name string, def float64, usage string) {
	bind(t, p, def, (*floatValue)(p), name, usage)
}

// setFloat binds a float the operator always writes (nil: not written).
func (t *flagTable) setFloat(p **float64, name string, def float64, usage string) {
	bind(t, p, &def, setFloat{p}, name, usage)
}

func (t *flagTable) duration(p *time.Duration, name string, def time.Duration, usage string) {
	bind(t, p, def, (*durationValue)(p), name, usage)
}

func (t *flagTable) boolean(p *bool, name, usage string) {
	bind(t, p, false, (*boolValue)(p), name, usage)
}

func (t *flagTable) address(p *Address, name, usage string) {
	bind(t, p, Address{}, (*addressValue)(p), name, usage)
}

func (t *flagTable) pairs(p *map[string]string, name, usage string) {
	bind(t, p, nil, pairsValue{p}, name, usage)
}

func (t *flagTable) list(p *[]string, name, usage string) {
	same := func(s string) string { return s }
	bind(t, p, nil, listValue[string]{p: p, format: same, parse: func(s string) (string, error) { return s, nil }}, name, usage)
}

// listOf binds a repeatable flag of elements that write and read themselves.
func listOf[T any](t *flagTable, p *[]T, name string, format func(T) string, parse func(string) (T, error), usage string) {
	bind(t, p, nil, listValue[T]{p: p, format: format, parse: parse}, name, usage)
}
