// Package arch checks the boundary the API conventions promise
// (docs/api-conventions.md): adding a load tool touches its package under
// workloads/, one line of workloads/registry and its API field; adding a
// target kind touches its files, one line of the target registry and its
// API field. So no controller and no internal package names a tool or a
// target kind outside those places: not as a string ("mysql",
// "hammerdb"), not as an API field (run.Spec.Workload.HammerDB). Comments
// may name them; code may not.
package arch

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// root is the repository, seen from this package.
const root = "../.."

// scanned are the trees that must stay generic.
var scanned = []string{"controllers", "internal"}

// name is one tool or target kind as code could spell it.
type name struct {
	words  []string // as strings spell it, lower case: "redis-benchmark", "redisbenchmark"
	fields []string // its API field in Go: "RedisBenchmark"
}

// allowedFiles are the files that may name everything of a kind of name,
// beside each target kind's own files (kindFiles).
var allowedFiles = map[string]string{
	"controllers/targets/registry.go": "the target registry: one line per target kind",
	"internal/pod/protocol.go": "the wire protocols tools speak to their targets, named once for the pod contract: not target kinds " +
		"(a tool speaks MySQL's protocol to MariaDB, to an external endpoint or to the operator's own target)",
	"internal/runner/dbstats/mysql.go":    "a database wire protocol, not a target kind: the poller of MySQL's and MariaDB's statistics speaks it to any endpoint",
	"internal/runner/diagnose/mongodb.go": "a database wire protocol, not a target kind: the diagnostics read serverStatus and top over it from any endpoint (MongoDB, FerretDB)",
	"internal/runner/diagnose/mysql.go":   "a database wire protocol, not a target kind: the diagnostics read performance_schema over it from any endpoint (MySQL, MariaDB)",
	"internal/runner/dbstats/mongodb.go": "a database wire protocol, not a target kind: the poller of serverStatus speaks it to any endpoint " +
		"(MongoDB, FerretDB or another server of its protocol)",
	"internal/runner/queryengine/clickhouse.go": "a database's HTTP interface, not a target kind: the query engine's client speaks it to any " +
		"ClickHouse endpoint, the operator's own target or an external one",
	"internal/runner/queryengine/sqlclients.go": "database wire protocols, not target kinds: the query engine's SQL clients speak them to any endpoint",
	"internal/runner/disturb/backends.go":       "database wire protocols, not target kinds: a disturbance's SQL load and write ledger speak them to any endpoint",
	"internal/runner/sessioncheck/check.go":     "a database wire protocol, not a target kind: the session check speaks MySQL's to any endpoint (MySQL, MariaDB)",
	"internal/runner/dbstats/opensearch.go": "a statistics API, not a target kind: the poller of the nodes stats API reads it " +
		"from any OpenSearch endpoint, the operator's own target or an external or managed cluster",
}

// kindFiles are the files of one target kind, which may name that kind (and
// no other, nor any tool): its provisioner in controllers/targets and its
// builder in internal/specs, each either one file or several that begin
// with its name (internal/specs/target_mysql_replicas.go).
func kindFiles(kind string) []string {
	return []string{"controllers/targets/" + kind + ".go", "internal/specs/target_" + kind + ".go"}
}

// kindOf is the target kind whose files rel is one of, or "".
func kindOf(rel string, kinds map[string]name) string {
	for kind := range kinds {
		for _, f := range kindFiles(kind) {
			if rel == f || strings.HasPrefix(rel, strings.TrimSuffix(f, ".go")+"_") {
				return kind
			}
		}
	}
	return ""
}

func TestNoControllerOrInternalPackageNamesAToolOrATargetKind(t *testing.T) {
	tools, kinds := toolNames(t), targetKinds(t)
	for f := range allowedFiles {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("allowed file %s: %v (a stale allow-list hides nothing, but says something false)", f, err)
		}
	}
	var all []name
	for _, n := range tools {
		all = append(all, n)
	}
	for _, n := range kinds {
		all = append(all, n)
	}
	files := 0
	var found []string
	for _, dir := range scanned {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if _, ok := allowedFiles[rel]; ok {
				return nil
			}
			files++
			var allowed []name
			if kind := kindOf(rel, kinds); kind != "" {
				allowed = []name{kinds[kind]}
			}
			found = append(found, scanFile(t, path, rel, without(all, allowed))...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 20 {
		t.Fatalf("scanned only %d files under %v: is the test looking in the right place?", files, scanned)
	}
	for _, f := range found {
		t.Error(f)
	}
	if len(found) > 0 {
		t.Logf("a tool belongs in workloads/<tool> and workloads/registry; a target kind in controllers/targets/<kind>.go, "+
			"internal/specs/target_<kind>.go and the target registry (allowed: %v)", allowedFiles)
	}
}

// The scanner itself, on code that does and does not name a tool or a kind.
func TestScannerFindsNamesInCodeNotInComments(t *testing.T) {
	names := []name{{words: []string{"hammerdb"}, fields: []string{"HammerDB"}}, {words: []string{"mysql"}, fields: []string{"MySQL"}},
		{words: []string{"redis-benchmark", "redisbenchmark"}, fields: []string{"RedisBenchmark"}}}
	for caseName, tc := range map[string]struct {
		src  string
		want int
	}{
		"a field selector":                  {"if run.Spec.Workload.HammerDB != nil { x() }", 1},
		"a composite literal's key":         {"_ = benchv1.TargetSpec{MySQL: &benchv1.MySQLTarget{}}", 1},
		"a string":                          {`kind := "mysql"`, 1},
		"a word in a message":               {`err := fmt.Errorf("spec.target.mysql.tls: bad")`, 1},
		"a tool's hyphenated name":          {`w := "redis-benchmark"`, 1},
		"a raw string":                      {"s := `MySQL`", 1},
		"a comment":                         {"// HammerDB needs the superuser; so does \"mysql\"\nx()", 0},
		"a longer word":                     {`g := "postgresql.mysqlx.io"`, 0},
		"an identifier that is not a field": {"s := specs.MySQLServer(run)", 0},
	} {
		t.Run(caseName, func(t *testing.T) {
			src := "package p\nfunc f() {\n" + tc.src + "\n}\n"
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if got := scanAST(fset, f, "p.go", names); len(got) != tc.want {
				t.Errorf("found %d, want %d: %v", len(got), tc.want, got)
			}
		})
	}
}

// toolNames are the registered tools, keyed by registry name, each with its
// WorkloadSpec field.
func toolNames(t *testing.T) map[string]name {
	t.Helper()
	fields := pointerFields(reflect.TypeOf(benchv1.WorkloadSpec{}))
	out := map[string]name{}
	for _, tool := range registry.Names() {
		key := strings.ReplaceAll(tool, "-", "")
		field, ok := fields[key]
		if !ok {
			t.Fatalf("tool %q has no field in WorkloadSpec (fields %v)", tool, fields)
		}
		out[tool] = name{words: unique(tool, key), fields: []string{field}}
	}
	return out
}

// targetKinds are the target kinds of the API (testutil.TargetKindFields),
// keyed by JSON name as spec.target spells them.
func targetKinds(t *testing.T) map[string]name {
	t.Helper()
	out := map[string]name{}
	for key, field := range testutil.TargetKindFields() {
		out[key] = name{words: []string{key}, fields: []string{field}}
	}
	if len(out) == 0 {
		t.Fatal("TargetSpec has no kinds")
	}
	return out
}

// pointerFields maps the lower-case JSON names of a struct's pointer-to-
// struct fields (the one-of members) to their Go names.
func pointerFields(typ reflect.Type) map[string]string {
	out := map[string]string{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct {
			continue
		}
		json, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out[strings.ToLower(json)] = f.Name
	}
	return out
}

func scanFile(t *testing.T, path, rel string, names []name) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("while parsing %s: %v", rel, err)
	}
	return scanAST(fset, f, rel, names)
}

// scanAST reports every string literal that contains a name as a word,
// and every selector or composite-literal key that is an API field of one.
// Comments are not part of the syntax tree's expressions, so they never count.
func scanAST(fset *token.FileSet, f *ast.File, rel string, names []name) []string {
	fields := map[string]bool{}
	var words []string
	for _, n := range names {
		words = append(words, n.words...)
		for _, fl := range n.fields {
			fields[fl] = true
		}
	}
	var wordRE *regexp.Regexp
	if len(words) > 0 {
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = regexp.QuoteMeta(w)
		}
		sort.Strings(quoted)
		wordRE = regexp.MustCompile(`(^|[^a-z0-9])(` + strings.Join(quoted, "|") + `)($|[^a-z0-9])`)
	}
	var out []string
	report := func(pos token.Pos, what string) {
		out = append(out, fmt.Sprintf("%s:%d: %s", rel, fset.Position(pos).Line, what))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind != token.STRING || wordRE == nil {
				return true
			}
			s, err := strconv.Unquote(n.Value)
			if err != nil {
				s = n.Value
			}
			if m := wordRE.FindStringSubmatch(strings.ToLower(s)); m != nil {
				report(n.Pos(), fmt.Sprintf("string %s names %q", n.Value, m[2]))
			}
		case *ast.SelectorExpr:
			if fields[n.Sel.Name] {
				report(n.Pos(), "field ."+n.Sel.Name)
			}
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok && fields[id.Name] {
				report(n.Pos(), "field "+id.Name+":")
			}
		}
		return true
	})
	return out
}

// without returns names minus the ones a file may use.
func without(names, allowed []name) []name {
	var out []name
	for _, n := range names {
		if !slicesContain(allowed, n) {
			out = append(out, n)
		}
	}
	return out
}

func slicesContain(list []name, n name) bool {
	for _, m := range list {
		if reflect.DeepEqual(m, n) {
			return true
		}
	}
	return false
}

func unique(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}
