// Package docs checks that the README, the project's front door, says what
// the product does today: every registered load tool and every target kind
// of the API is named where a newcomer looks first. The lists come from the
// registry and the API type, so adding a tool or a target without telling
// the README fails here; so does a phase, a condition type or a package
// directory it does not name (lifecycle_test.go).
package docs

import (
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

const readmePath = "../../README.md"

// tool is a registered load tool with the API field that selects it.
type tool struct {
	name  string // registry name, as `dbperf-runner --workload` takes it
	field string // JSON name under spec.workload
}

func TestREADMEOpeningNamesEveryToolAndTarget(t *testing.T) {
	opening := openingParagraph(readLines(t))
	var missing []string
	for _, tl := range registeredTools(t) {
		if !mentions(opening, tl.name) && !mentions(opening, tl.field) {
			missing = append(missing, "tool "+tl.name)
		}
	}
	for _, kind := range targetKinds() {
		if !mentions(opening, kind) {
			missing = append(missing, "target "+kind)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the README's opening paragraph does not name %s:\n%s", strings.Join(missing, ", "), opening)
	}
}

func TestREADMEWorkloadsTableHasEveryTool(t *testing.T) {
	table := firstTable(section(readLines(t), "### Workloads"))
	if len(table) == 0 {
		t.Fatal("the README has no table under \"### Workloads\"")
	}
	rows := map[string]bool{}
	for _, name := range firstCells(table) {
		rows[name] = true
	}
	for _, tl := range registeredTools(t) {
		if !rows["`"+tl.field+"`"] {
			t.Errorf("the README's workloads table has no row `%s` (tool %s); rows: %v", tl.field, tl.name, sortedKeys(rows))
		}
	}
}

func TestREADMETargetsSectionHasEveryKind(t *testing.T) {
	lines := section(readLines(t), "### Targets")
	for _, kind := range targetKinds() {
		if !hasBullet(lines, "`"+kind+"`") {
			t.Errorf("the README's Targets section has no bullet \"- `%s`\"", kind)
		}
	}
}

// A blank line inside a Markdown table ends it; the rows after it render as
// a paragraph of pipes. So every table must start with a header and its
// delimiter row.
func TestREADMETablesAreWhole(t *testing.T) {
	lines := readLines(t)
	for i, block := range tableBlocks(lines) {
		if len(block.lines) < 2 || !delimiterRow.MatchString(block.lines[1]) {
			t.Errorf("README line %d: table %d has no header and delimiter row (a blank line splitting a table?): %q",
				block.start+1, i+1, block.lines[0])
		}
	}
}

func readLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatalf("while reading the README: %v", err)
	}
	return strings.Split(string(b), "\n")
}

// registeredTools pairs every registry name with the API field that selects
// it, found by setting each pointer field of WorkloadSpec in turn and asking
// the registry which tool that spec selects.
func registeredTools(t *testing.T) []tool {
	t.Helper()
	byName := map[string]string{}
	typ := reflect.TypeOf(benchv1.WorkloadSpec{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Pointer {
			continue
		}
		spec := &benchv1.WorkloadSpec{}
		reflect.ValueOf(spec).Elem().Field(i).Set(reflect.New(f.Type.Elem()))
		if w, err := registry.For(spec); err == nil {
			byName[w.Name()] = jsonName(f)
		}
	}
	var tools []tool
	for _, name := range registry.Names() {
		field, ok := byName[name]
		if !ok {
			t.Fatalf("registered tool %q is selected by no field of spec.workload", name)
		}
		tools = append(tools, tool{name: name, field: field})
	}
	if len(tools) == 0 {
		t.Fatal("the registry lists no tools")
	}
	return tools
}

// targetKinds are the JSON names of TargetSpec's kind fields: the optional
// pointers, one of which a run sets (placement and the like are values).
func targetKinds() []string {
	var kinds []string
	for kind := range testutil.TargetKindFields() {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	return kinds
}

func jsonName(f reflect.StructField) string {
	return strings.Split(f.Tag.Get("json"), ",")[0]
}

// mentions reports whether text names word at the start of a word, in any
// case: "memtier" in "memtier_benchmark", "postgres" in "PostgreSQL".
func mentions(text, word string) bool {
	return regexp.MustCompile(`(?i)(^|[^a-z0-9])` + regexp.QuoteMeta(word)).MatchString(text)
}

// openingParagraph is the first paragraph after the title.
func openingParagraph(lines []string) string {
	var para []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "# "):
			continue
		case strings.TrimSpace(l) == "":
			if len(para) > 0 {
				return strings.Join(para, "\n")
			}
		default:
			para = append(para, l)
		}
	}
	return strings.Join(para, "\n")
}

// section returns the lines under a heading, up to the next heading of the
// same or a higher level outside code fences.
func section(lines []string, heading string) []string {
	level := headingLevel(heading)
	for i, l := range lines {
		if l != heading {
			continue
		}
		fenced := false
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "```") {
				fenced = !fenced
			}
			if n := headingLevel(lines[j]); !fenced && n > 0 && n <= level {
				return lines[i+1 : j]
			}
		}
		return lines[i+1:]
	}
	return nil
}

// headingLevel is the number of leading #s of a Markdown heading, else 0.
func headingLevel(line string) int {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || !strings.HasPrefix(line[n:], " ") {
		return 0
	}
	return n
}

type block struct {
	start int
	lines []string
}

var delimiterRow = regexp.MustCompile(`^\|(\s*:?-+:?\s*\|)+\s*$`)

// tableBlocks are the runs of consecutive table lines outside code fences.
func tableBlocks(lines []string) []block {
	var blocks []block
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(l, "|") {
			continue
		}
		if n := len(blocks); n > 0 && blocks[n-1].start+len(blocks[n-1].lines) == i {
			blocks[n-1].lines = append(blocks[n-1].lines, l)
		} else {
			blocks = append(blocks, block{start: i, lines: []string{l}})
		}
	}
	return blocks
}

func firstTable(lines []string) []string {
	if blocks := tableBlocks(lines); len(blocks) > 0 {
		return blocks[0].lines
	}
	return nil
}

// firstCells are the first cells of a table's body rows.
func firstCells(table []string) []string {
	var cells []string
	for _, row := range table[min(2, len(table)):] {
		if parts := strings.Split(row, "|"); len(parts) > 1 {
			cells = append(cells, strings.TrimSpace(parts[1]))
		}
	}
	return cells
}

func hasBullet(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, "- "+prefix) {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
