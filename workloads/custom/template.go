package custom

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dbperf-io/dbperf-operator/workloads"
)

// placeholder is {{name}}: what a step's value replaces. The schema's CEL
// rules find placeholders with the same expression.
var placeholder = regexp.MustCompile(`\{\{([^{}]*)\}\}`)

// expand replaces the placeholders of s by the step's values; Validate
// has made sure there is no other. With shares (the command line, which
// the runner of each load generator completes), {{rate}} becomes the
// generator's share of the offered rate; elsewhere it is the whole rate.
func expand(s string, params map[string]int32, shares bool) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-2]
		v, ok := params[name]
		switch {
		case !ok:
			return m
		case shares && name == workloads.RateParameter:
			// An offered rate: each load generator is given its share
			// (the runner places the remainder).
			return workloads.SharePlaceholder(int64(v))
		}
		return strconv.Itoa(int(v))
	})
}

// checkTemplate reports a placeholder that names no parameter, and a {{
// that begins none. A }} alone is text (JSON ends objects with it).
func checkTemplate(s string, known []string, path *field.Path) field.ErrorList {
	if !strings.Contains(s, "{{") {
		return nil
	}
	var errs field.ErrorList
	for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(known, m[1]) {
			errs = append(errs, field.Invalid(path, s, fmt.Sprintf("unknown placeholder %s: %s", m[0], knownPlaceholders(known))))
		}
	}
	if rest := placeholder.ReplaceAllString(s, ""); strings.Contains(rest, "{{") {
		errs = append(errs, field.Invalid(path, s, "a {{ that begins no placeholder: a placeholder is {{name}}, name one of parameters"))
	}
	return errs
}

// checkNoTemplate reports placeholders where no step's values apply.
func checkNoTemplate(s string, path *field.Path) *field.Error {
	if strings.Contains(s, "{{") {
		return field.Invalid(path, s, "prepare runs once, before every step: it cannot use the sweep's placeholders")
	}
	return nil
}

func knownPlaceholders(known []string) string {
	if len(known) == 0 {
		return "spec.workload.custom.parameters is empty, so there is none"
	}
	out := make([]string, len(known))
	for i, k := range known {
		out[i] = "{{" + k + "}}"
	}
	return "the placeholders of parameters are " + strings.Join(out, ", ")
}
