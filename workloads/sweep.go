package workloads

import (
	"fmt"
	"sort"
	"strings"
)

// Dimension is one swept parameter and its values.
type Dimension struct {
	Name   string
	Values []int32
}

// Sweep returns the cartesian product of the dimensions, the first dimension
// varying slowest. Dimensions with no values are skipped.
func Sweep(dims ...Dimension) []Step {
	steps := []Step{{Params: map[string]int32{}}}
	for _, d := range dims {
		if len(d.Values) == 0 {
			continue
		}
		next := make([]Step, 0, len(steps)*len(d.Values))
		for _, s := range steps {
			for _, v := range d.Values {
				p := make(map[string]int32, len(s.Params)+1)
				for k, val := range s.Params {
					p[k] = val
				}
				p[d.Name] = v
				next = append(next, Step{Params: p})
			}
		}
		steps = next
	}
	for i := range steps {
		var parts []string
		for _, d := range dims {
			if v, ok := steps[i].Params[d.Name]; ok {
				parts = append(parts, fmt.Sprintf("%s=%d", d.Name, v))
			}
		}
		steps[i].Name = strings.Join(parts, ",")
	}
	return steps
}

// OptionalSweep is a one-dimension sweep, or, when no values are given,
// one step named single that leaves the tool's own default in place.
func OptionalSweep(name string, values []int32, single string) []Step {
	if len(values) == 0 {
		return []Step{{Name: single, Params: map[string]int32{}}}
	}
	return Sweep(Dimension{Name: name, Values: values})
}

// SortedKeys returns a map's keys in order, for stable command lines.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
