// Command structure measures the shape of the code, for a structural change
// to report before → after (`go run ./hack/structure`): production and test
// lines, the largest files, function lengths, packages, sleeps in tests, how
// many places spell each flag of dbperf-runner, and what the manager binary
// links (its size and the database drivers among its dependencies).
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

type file struct {
	path  string
	lines int
	test  bool
}

func main() {
	var files []file
	var funcLens []int
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "bin" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasPrefix(d.Name(), "zz_generated") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f := file{path: path, lines: bytes.Count(src, []byte("\n")), test: strings.HasSuffix(path, "_test.go")}
		files = append(files, f)
		if f.test {
			return nil
		}
		parsed, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		for _, decl := range parsed.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
				funcLens = append(funcLens, fset.Position(fn.End()).Line-fset.Position(fn.Pos()).Line+1)
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	prod, test := 0, 0
	for _, f := range files {
		if f.test {
			test += f.lines
		} else {
			prod += f.lines
		}
	}
	fmt.Printf("lines: production %d, tests %d (Go, generated code left out)\n", prod, test)
	sort.Slice(files, func(i, j int) bool { return files[i].lines > files[j].lines })
	fmt.Println("largest files:")
	for _, f := range files[:min(12, len(files))] {
		fmt.Printf("  %5d  %s\n", f.lines, f.path)
	}
	sort.Ints(funcLens)
	q := func(p float64) int { return funcLens[int(p*float64(len(funcLens)-1))] }
	fmt.Printf("functions (production): %d, lines p50 %d, p90 %d, p99 %d, max %d\n", len(funcLens), q(0.5), q(0.9), q(0.99), funcLens[len(funcLens)-1])
	pkgs, _ := exec.Command("go", "list", "./...").Output()
	fmt.Printf("packages: %d\n", len(strings.Fields(string(pkgs))))
	sleeps, _ := exec.Command("git", "grep", "-c", `time\.Sleep(`, "--", "*_test.go").Output()
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(string(sleeps)), "\n") {
		if i := strings.LastIndex(l, ":"); i > 0 {
			if c, err := strconv.Atoi(l[i+1:]); err == nil {
				n += c
			}
		}
	}
	fmt.Printf("time.Sleep in tests: %d\n", n)
	runnerFlags()
	managerBinary()
}

// runnerFlags counts, for every flag dbperf-runner defines, the Go files
// (tests left out) that spell its name as a string literal ("name" or
// "--name"): once means one typed contract. The flags are the runner's own
// word for them, its -h of each command, wherever they are defined.
func runnerFlags() {
	dir, err := os.MkdirTemp("", "structure")
	if err != nil {
		return
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "dbperf-runner")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/runner").CombinedOutput(); err != nil {
		fmt.Printf("runner flags: build failed: %v %s\n", err, out)
		return
	}
	def := regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]+)`)
	names := map[string]bool{}
	for _, command := range []string{"exec", "parse", "show", "query"} {
		help, _ := exec.Command(bin, command, "-h").CombinedOutput() // -h exits non-zero
		for _, m := range def.FindAllSubmatch(help, -1) {
			names[string(m[1])] = true
		}
	}
	// Any literal of the name counts (a JSON field or another tool's flag of
	// the same name too); a literal with the dashes is a command line
	// written by hand.
	spelled(names, `"-{0,2}`, `[="]`, "spelled in")
	spelled(names, `"--`, `[=" ]`, "written as \"--name\" in")
}

func spelled(names map[string]bool, before, after, what string) {
	places := map[int]int{}
	worst, worstN := "", 0
	for name := range names {
		lit := regexp.MustCompile(before + regexp.QuoteMeta(name) + after)
		count := 0
		for _, p := range goFiles(".") {
			src, _ := os.ReadFile(p)
			if lit.Match(src) {
				count++
			}
		}
		places[count]++
		if count > worstN || count == worstN && name < worst {
			worst, worstN = name, count
		}
	}
	var parts []string
	for _, k := range sortedKeys(places) {
		parts = append(parts, fmt.Sprintf("%d in %d file(s)", places[k], k))
	}
	fmt.Printf("runner flags: %d; %s: %s; the most: --%s in %d files\n", len(names), what, strings.Join(parts, ", "), worst, worstN)
}

func managerBinary() {
	dir, err := os.MkdirTemp("", "structure")
	if err != nil {
		return
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "manager")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/manager")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Printf("manager: build failed: %v %s\n", err, out)
		return
	}
	st, _ := os.Stat(bin)
	deps, _ := exec.Command("go", "list", "-deps", "./cmd/manager").Output()
	all := strings.Fields(string(deps))
	var drivers []string
	for _, d := range []string{"github.com/jackc/pgx", "github.com/go-sql-driver/mysql", "github.com/redis/go-redis", "go.mongodb.org/mongo-driver", "github.com/ClickHouse"} {
		for _, p := range all {
			if strings.HasPrefix(p, d) {
				drivers = append(drivers, d)
				break
			}
		}
	}
	fmt.Printf("manager: %.1f MiB (stripped), %d packages linked, database drivers: %s\n", float64(st.Size())/(1<<20), len(all), strings.Join(append(drivers, "none")[:max(1, len(drivers))], ", "))
}

func goFiles(root string) []string {
	var out []string
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." && path != root || d.Name() == "bin" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			out = append(out, path)
		}
		return nil
	})
	return out
}

func sortedKeys(m map[int]int) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
