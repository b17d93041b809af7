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

// The README's phases and conditions are the API's: the phases from each
// kind's Phase constants, in the order declared (the order of a life), and
// the condition types from the Condition constants of api/v1alpha1. Its
// layout names every directory of the repository, and every package
// directory of cmd/, controllers/, internal/, hack/ and test/.

const apiDir = "../../api/v1alpha1"

// phaseKinds are the API's phase types and the kind each is the phase of.
// A new phase type fails TestREADMEPhasesAreTheAPIs until it is added here
// and to the README.
var phaseKinds = map[string]string{"Phase": "BenchmarkRun", "ComparisonPhase": "BenchmarkComparison"}

func TestREADMEPhasesAreTheAPIs(t *testing.T) {
	lines := section(readLines(t), "### Phases and conditions")
	phases := typedConstants(t)
	found := 0
	for typ, values := range phases {
		if !strings.HasSuffix(typ, "Phase") {
			continue
		}
		found++
		kind, ok := phaseKinds[typ]
		if !ok {
			t.Errorf("api/v1alpha1 declares the phase type %s (%v): say whose in phaseKinds and list its phases in the README", typ, values)
			continue
		}
		line := lineStarting(lines, "`"+kind+"` phases:")
		if line == "" {
			t.Errorf("the README's \"### Phases and conditions\" has no line \"`%s` phases: ...\"", kind)
			continue
		}
		if got := wordsAmong(line, values); strings.Join(got, " ") != strings.Join(values, " ") {
			t.Errorf("the README gives %s's phases as %v, the API (%s, in order) %v:\n%s", kind, got, typ, values, line)
		}
	}
	if found != len(phaseKinds) {
		t.Errorf("found %d phase types in api/v1alpha1, phaseKinds names %d", found, len(phaseKinds))
	}
}

func TestREADMEConditionsAreTheAPIs(t *testing.T) {
	lines := section(readLines(t), "### Phases and conditions")
	bullet := regexp.MustCompile("^- `([A-Za-z]+)`:")
	inREADME := map[string]bool{}
	for _, l := range lines {
		if m := bullet.FindStringSubmatch(l); m != nil {
			inREADME[m[1]] = true
		}
	}
	inAPI := map[string]bool{}
	for _, c := range conditionTypes(t) {
		inAPI[c] = true
		if !inREADME[c] {
			t.Errorf("the README's \"### Phases and conditions\" has no bullet \"- `%s`: ...\" (a condition type of api/v1alpha1)", c)
		}
	}
	if len(inAPI) < 4 {
		t.Fatalf("found only %v as condition types in api/v1alpha1: is the test reading the right constants?", sortedKeys(inAPI))
	}
	for c := range inREADME {
		if !inAPI[c] {
			t.Errorf("the README describes the condition %s, which api/v1alpha1 does not declare (Condition constants: %v)", c, sortedKeys(inAPI))
		}
	}
}

func TestREADMELayoutNamesEveryDirectory(t *testing.T) {
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
			t.Errorf("the README's layout has no entry %s/", d.Name())
			continue
		}
		for _, sub := range packageDirs(t, d.Name()) {
			if !mentionsWord(text, sub) {
				t.Errorf("the README's layout entry %s/ does not name %s (%s/%s)", d.Name(), sub, d.Name(), sub)
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

// conditionTypes are the values of the Condition constants of api/v1alpha1.
func conditionTypes(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, spec := range apiConstants(t) {
		for i, name := range spec.Names {
			if strings.HasPrefix(name.Name, "Condition") && i < len(spec.Values) {
				out = append(out, stringValue(spec.Values[i]))
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

func lineStarting(lines []string, prefix string) string {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			// The sentence goes on until a blank line or a bullet.
			for j := i + 1; j < len(lines) && strings.TrimSpace(lines[j]) != "" && !strings.HasPrefix(lines[j], "- "); j++ {
				l += " " + lines[j]
			}
			return l
		}
	}
	return ""
}

// wordsAmong are the words of text that are among values, in text's order,
// each once.
func wordsAmong(text string, values []string) []string {
	known := map[string]bool{}
	for _, v := range values {
		known[v] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, w := range regexp.MustCompile(`[A-Za-z]+`).FindAllString(text, -1) {
		if known[w] && !seen[w] {
			out = append(out, w)
			seen[w] = true
		}
	}
	return out
}

// layoutEntries are the entries of the README's layout block by their
// top directory: the entry's lines joined.
func layoutEntries(t *testing.T) map[string]string {
	t.Helper()
	lines := section(readLines(t), "## Layout")
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
		t.Fatalf("the README's \"## Layout\" has %d entries: %v", len(out), out)
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
