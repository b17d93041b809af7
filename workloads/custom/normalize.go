package custom

import (
	"fmt"
	"strings"
)

// normalize rewrites, line for line, what the Prometheus text parser does
// not read of OpenMetrics: a counter family NAME, whose samples are
// NAME_total, is typed as NAME_total; type unknown is untyped; the types
// the parser lacks, which hold no measurement (info, stateset,
// gaugehistogram), are left out, and so are _created samples and
// exemplars. # UNIT lines, which the parser skips as comments, are read
// for the units.
func normalize(lines []string) *exposition {
	x := &exposition{units: map[string]string{}, lines: map[string]int{}}
	types := map[string]string{}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) >= 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
		}
	}
	skipped := map[string]bool{}
	for name, t := range types {
		if !knownType(t) && t != "unknown" {
			skipped[name] = true
		}
	}
	rename := func(name string) string {
		if types[name] == "counter" && !strings.HasSuffix(name, "_total") {
			return name + "_total"
		}
		return name
	}
	for i, l := range lines {
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case f[0] == "#" && len(f) >= 3 && (f[1] == "TYPE" || f[1] == "HELP" || f[1] == "UNIT"):
			name := rename(f[2])
			if _, seen := x.lines[name]; !seen {
				x.lines[name] = i + 1
			}
			switch {
			case f[1] == "UNIT" && len(f) >= 4:
				x.units[name] = f[3]
			case f[1] == "TYPE" && len(f) >= 4 && f[3] == "unknown":
				lines[i] = "# TYPE " + name + " untyped"
			case skipped[f[2]]:
				lines[i] = ""
				if f[1] == "TYPE" {
					x.warnings = append(x.warnings, fmt.Sprintf("line %d: %s is an OpenMetrics %s, which holds no measurement dbperf reads: left out", i+1, f[2], f[3]))
				}
			case f[1] != "UNIT":
				lines[i] = strings.Replace(l, f[2], name, 1)
			}
		case strings.HasPrefix(f[0], "#"):
		case strings.HasPrefix(f[0], "{"):
			// A name in quotes inside the braces is not OpenMetrics 1.0,
			// and the parser panics on a sample with none.
			lines[i] = ""
			x.problems = append(x.problems, fmt.Sprintf("line %d: a sample without a metric name before its labels", i+1))
		default:
			name := sampleName(l)
			if base, ok := strings.CutSuffix(name, "_created"); ok && createdOf(types, base) || ofSkipped(skipped, name) {
				lines[i] = ""
				continue
			}
			if _, seen := x.lines[name]; !seen {
				x.lines[name] = i + 1
			}
			lines[i] = withoutExemplar(l)
		}
	}
	x.text = []byte(strings.Join(lines, "\n") + "\n")
	return x
}

// ofSkipped says whether a sample belongs to a family left out: its name
// is the family's, or the family's with a suffix (app_info of app).
func ofSkipped(skipped map[string]bool, name string) bool {
	for fam := range skipped {
		if name == fam || strings.HasPrefix(name, fam+"_") {
			return true
		}
	}
	return false
}

func knownType(t string) bool {
	switch t {
	case "counter", "gauge", "histogram", "summary", "untyped":
		return true
	}
	return false
}

// createdOf says whether base_created is the creation time of a family.
func createdOf(types map[string]string, base string) bool {
	switch types[base] {
	case "counter", "histogram", "summary":
		return true
	}
	return types[strings.TrimSuffix(base, "_total")] == "counter"
}

// sampleName is the metric name a sample line begins with.
func sampleName(l string) string {
	l = strings.TrimSpace(l)
	if i := strings.IndexAny(l, "{ \t"); i >= 0 {
		return l[:i]
	}
	return l
}

// withoutExemplar cuts an exemplar (" # {trace_id=…} 1.0") off a sample
// line: the first # outside the label set's quoted values.
func withoutExemplar(l string) string {
	quoted, escaped := false, false
	for i, r := range l {
		switch {
		case escaped:
			escaped = false
		case r == '\\' && quoted:
			escaped = true
		case r == '"':
			quoted = !quoted
		case r == '#' && !quoted:
			return strings.TrimRight(l[:i], " \t")
		}
	}
	return l
}
