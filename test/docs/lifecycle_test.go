package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The table of phases and conditions in docs/concepts.md is the API's: the
// phases of each kind from its Phase constants, in the order declared (the
// order of a life); one row per Condition constant of api/v1alpha1, and
// every Reason constant in some condition's row, none that is not one. The
// README links to the table. The layout of docs/development.md names every
// directory of the repository, and every package directory of cmd/,
// controllers/, internal/, hack/ and test/.

const (
	apiDir       = "../../api/v1alpha1"
	conceptsPath = "../../docs/concepts.md"
	tableHeading = "## Phases and conditions"
	layoutPath   = "../../docs/development.md"
)

// phaseKinds are the API's phase types and the kind each is the phase of.
// A new phase type fails TestThePhasesAreTheAPIs until it is added here
// and to the table.
var phaseKinds = map[string]string{"Phase": "BenchmarkRun", "ComparisonPhase": "BenchmarkComparison"}

// lifecycleRow is a row of the table: kind, "phase" or a condition type in
// backquotes, the values and reasons, the meaning.
type lifecycleRow struct {
	kind, what, values string
}

func lifecycleTable(t *testing.T) []lifecycleRow {
	t.Helper()
	table := firstTable(section(readFile(t, conceptsPath), tableHeading))
	if len(table) < 3 {
		t.Fatalf("docs/concepts.md has no table under %q", tableHeading)
	}
	var rows []lifecycleRow
	for _, line := range table[2:] {
		cells := splitRow(line)
		if len(cells) < 3 {
			t.Fatalf("docs/concepts.md: a row of the phases and conditions table has %d cells: %s", len(cells), line)
		}
		rows = append(rows, lifecycleRow{kind: cells[0], what: strings.Trim(cells[1], "`"), values: cells[2]})
	}
	return rows
}

func TestThePhasesAreTheAPIs(t *testing.T) {
	rows := lifecycleTable(t)
	found := 0
	for typ, values := range typedConstants(t) {
		if !strings.HasSuffix(typ, "Phase") {
			continue
		}
		found++
		kind, ok := phaseKinds[typ]
		if !ok {
			t.Errorf("api/v1alpha1 declares the phase type %s (%v): say whose in phaseKinds and list its phases in docs/concepts.md", typ, values)
			continue
		}
		var line string
		for _, r := range rows {
			if r.kind == kind && r.what == "phase" {
				line = r.values
			}
		}
		if line == "" {
			t.Errorf("docs/concepts.md's %q has no row \"| %s | phase | ...\"", tableHeading, kind)
			continue
		}
		if got := codeSpans(line); strings.Join(got, " ") != strings.Join(values, " ") {
			t.Errorf("docs/concepts.md gives %s's phases as %v, the API (%s, in order) %v", kind, got, typ, values)
		}
	}
	if found != len(phaseKinds) {
		t.Errorf("found %d phase types in api/v1alpha1, phaseKinds names %d", found, len(phaseKinds))
	}
}

func TestTheConditionsAreTheAPIs(t *testing.T) {
	inDoc := map[string]bool{}
	for _, r := range lifecycleTable(t) {
		if r.what != "phase" {
			inDoc[r.what] = true
		}
	}
	inAPI := map[string]bool{}
	for _, c := range constantsNamed(t, "Condition") {
		inAPI[c] = true
		if !inDoc[c] {
			t.Errorf("docs/concepts.md's phases and conditions table has no row for the condition %s (a Condition constant of api/v1alpha1)", c)
		}
	}
	if len(inAPI) < 4 {
		t.Fatalf("found only %v as condition types in api/v1alpha1: is the test reading the right constants?", sortedKeys(inAPI))
	}
	for c := range inDoc {
		if !inAPI[c] {
			t.Errorf("docs/concepts.md describes the condition %s, which api/v1alpha1 does not declare (Condition constants: %v)", c, sortedKeys(inAPI))
		}
	}
}

func TestTheReasonsAreTheAPIs(t *testing.T) {
	inDoc := map[string]bool{}
	for _, r := range lifecycleTable(t) {
		if r.what == "phase" {
			continue
		}
		for _, reason := range codeSpans(r.values) {
			inDoc[reason] = true
		}
	}
	inAPI := map[string]bool{}
	for _, r := range constantsNamed(t, "Reason") {
		inAPI[r] = true
	}
	if len(inAPI) < 20 {
		t.Fatalf("found only %v as condition reasons in api/v1alpha1: is the test reading the right constants?", sortedKeys(inAPI))
	}
	for r := range inAPI {
		if !inDoc[r] {
			t.Errorf("no condition's row in docs/concepts.md's %q names the reason %s (a Reason constant of api/v1alpha1)", tableHeading, r)
		}
	}
	for r := range inDoc {
		if !inAPI[r] {
			t.Errorf("docs/concepts.md gives %s as a condition's reason, which api/v1alpha1 does not declare", r)
		}
	}
}

func TestTheREADMELinksToTheTable(t *testing.T) {
	if !strings.Contains(strings.Join(readLines(t), "\n"), "(docs/concepts.md#phases-and-conditions)") {
		t.Error("the README does not link to docs/concepts.md#phases-and-conditions, the one table of phases and conditions")
	}
}

func TestTheLayoutNamesEveryDirectory(t *testing.T) {
	entries := layoutEntries(t)
	top, err := os.ReadDir("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range top {
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" {
			continue
		}
		text, ok := entries[d.Name()]
		if !ok {
			t.Errorf("the layout of docs/development.md has no entry %s/", d.Name())
			continue
		}
		for _, sub := range packageDirs(t, d.Name()) {
			if !mentionsWord(text, sub) {
				t.Errorf("the layout entry %s/ of docs/development.md does not name %s (%s/%s)", d.Name(), sub, d.Name(), sub)
			}
		}
	}
}

// typedConstants are the string constants of api/v1alpha1 by their type,
// in the order declared.
func typedConstants(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, spec := range apiConstants(t) {
		if id, ok := spec.Type.(*ast.Ident); ok {
			for _, v := range spec.Values {
				out[id.Name] = append(out[id.Name], stringValue(v))
			}
		}
	}
	return out
}

// constantsNamed are the values of the string constants of api/v1alpha1
// whose names start with prefix (Condition, Reason).
func constantsNamed(t *testing.T, prefix string) []string {
	t.Helper()
	var out []string
	for _, spec := range apiConstants(t) {
		for i, name := range spec.Names {
			if strings.HasPrefix(name.Name, prefix) && i < len(spec.Values) {
				if v := stringValue(spec.Values[i]); v != "" {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// apiConstants are the constant specs of api/v1alpha1, file by file in
// name order.
func apiConstants(t *testing.T) []*ast.ValueSpec {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(apiDir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []*ast.ValueSpec
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(filepath.Base(f), "zz_generated") {
			continue
		}
		parsed, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range parsed.Decls {
			if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, s := range g.Specs {
					out = append(out, s.(*ast.ValueSpec))
				}
			}
		}
	}
	return out
}

func stringValue(e ast.Expr) string {
	if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
		if s, err := strconv.Unquote(lit.Value); err == nil {
			return s
		}
	}
	return ""
}

// codeSpans are the `code spans` of text, in order, each once.
func codeSpans(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(text, -1) {
		if !seen[m[1]] {
			out = append(out, m[1])
			seen[m[1]] = true
		}
	}
	return out
}

// splitRow splits a table row into its cells, an escaped \| kept in its cell.
func splitRow(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	row = strings.ReplaceAll(row, `\|`, "\x00")
	var cells []string
	for _, c := range strings.Split(row, "|") {
		cells = append(cells, strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|")))
	}
	return cells
}

// layoutEntries are the entries of docs/development.md's layout block by
// their top directory: the entry's lines joined.
func layoutEntries(t *testing.T) map[string]string {
	t.Helper()
	lines := section(readFile(t, layoutPath), "## Layout")
	out := map[string]string{}
	cur := ""
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "```"), strings.TrimSpace(l) == "":
		case !strings.HasPrefix(l, " "):
			cur = strings.SplitN(strings.Fields(l)[0], "/", 2)[0]
			out[cur] += l
		case cur != "":
			out[cur] += " " + strings.TrimSpace(l)
		}
	}
	if len(out) < 5 {
		t.Fatalf("docs/development.md's \"## Layout\" has %d entries: %v", len(out), out)
	}
	return out
}

// packageDirs are the directories of dir holding Go code, for the trees
// whose every package the layout names.
func packageDirs(t *testing.T, dir string) []string {
	t.Helper()
	switch dir {
	case "cmd", "controllers", "internal", "hack", "test":
	default:
		return nil
	}
	subs, err := os.ReadDir(filepath.Join("../..", dir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range subs {
		if !s.IsDir() || s.Name() == "testdata" {
			continue
		}
		if goFiles, _ := filepath.Glob(filepath.Join("../..", dir, s.Name(), "*.go")); len(goFiles) > 0 {
			out = append(out, s.Name())
		}
	}
	return out
}

// mentionsWord: text names word as a whole word ("docs" not in "apidocs").
func mentionsWord(text, word string) bool {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_-])` + regexp.QuoteMeta(word) + `($|[^A-Za-z0-9_-])`).MatchString(text)
}
