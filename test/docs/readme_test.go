// Package docs checks the documentation against the code, so that what can
// drift is caught when it does. The README, the project's front door, names
// every registered load tool with its default image and every target kind
// of the API where a newcomer looks first (this file); the table of phases
// and conditions in docs/concepts.md is the API's, and the layout in
// docs/development.md names every package (lifecycle_test.go); the defaults
// the docs quote are the code's, every make target and kubectl dbperf
// command they name exists, every relative link and anchor resolves and
// every repository path they name exists, every table and code block is
// whole, and no user doc names an issue or a commit (drift_test.go); the
// default images docs/install.md lists for air-gapped installs, and its
// remap examples, are the code's (airgap_test.go).
package docs

import (
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

const readmePath = "../../README.md"

// tool is a registered load tool with the API field that selects it.
type tool struct {
	name  string // registry name, as `dbperf-runner --workload` takes it
	field string // JSON name under spec.workload
	image string // its default image; empty for a tool that has none
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

// The README's workloads table has a row per tool, with the tool's default
// image (the image its pods run unless workload.image says otherwise).
func TestREADMEWorkloadsTableHasEveryTool(t *testing.T) {
	table := firstTable(section(readLines(t), "### Workloads"))
	if len(table) == 0 {
		t.Fatal("the README has no table under \"### Workloads\"")
	}
	rows := map[string]string{}
	for _, row := range table[min(2, len(table)):] {
		if cells := splitRow(row); len(cells) > 1 {
			rows[cells[0]] = cells[1]
		}
	}
	for _, tl := range registeredTools(t) {
		cell, ok := rows["`"+tl.field+"`"]
		if !ok {
			t.Errorf("the README's workloads table has no row `%s` (tool %s)", tl.field, tl.name)
			continue
		}
		if img := tl.image; img != "" && !strings.Contains(cell, "`"+img+"`") {
			t.Errorf("the README's workloads row `%s` does not give its default image `%s`: %s", tl.field, img, cell)
		}
	}
}

// The README's targets give the default image of each server the operator
// runs, as the builders define it.
func TestREADMETargetsGiveTheDefaultImages(t *testing.T) {
	lines := section(readLines(t), "### Targets")
	for kind, img := range map[string]string{
		"valkey": specs.DefaultValkeyImage, "mysql": specs.DefaultMySQLImage, "mongodb": specs.DefaultMongoDBImage,
		"opensearch": specs.DefaultOpenSearchImage, "clickhouse": specs.DefaultClickHouseImage,
	} {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, "- `"+kind+"`") {
				found = strings.Contains(l, "`"+img+"`")
			}
		}
		if !found {
			t.Errorf("the README's target bullet `%s` does not give its default image `%s`", kind, img)
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

func readLines(t *testing.T) []string {
	t.Helper()
	return readFile(t, readmePath)
}

func readFile(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("while reading %s: %v", path, err)
	}
	return strings.Split(string(b), "\n")
}

// registeredTools pairs every registry name with the API field that selects
// it, found by setting each pointer field of WorkloadSpec in turn and asking
// the registry which tool that spec selects.
func registeredTools(t *testing.T) []tool {
	t.Helper()
	byName := map[string]string{}
	images := map[string]string{}
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
			images[w.Name()] = w.DefaultImage()
		}
	}
	var tools []tool
	for _, name := range registry.Names() {
		field, ok := byName[name]
		if !ok {
			t.Fatalf("registered tool %q is selected by no field of spec.workload", name)
		}
		tools = append(tools, tool{name: name, field: field, image: images[name]})
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
