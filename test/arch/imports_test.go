package arch

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the import path of this repository.
const module = "github.com/dbperf-io/dbperf-operator"

// podSide is what only the inside of a workload pod may link: the database
// drivers, and the runner's own packages (the query engine, the session
// check, the statistics pollers under internal/runner).
var podSide = []string{
	"github.com/jackc/pgx",
	"github.com/go-sql-driver/mysql",
	"github.com/redis/go-redis",
	"go.mongodb.org/mongo-driver",
	module + "/internal/runner",
}

// The manager describes workload pods and never connects to a database:
// neither it nor the controllers, nor the contract both sides share, link
// a driver or the runner's code. Tools describe what their target speaks
// (workloads.Speaker); the pod connects.
func TestManagerLinksNoPodSideCode(t *testing.T) {
	for pkg, path := range podSideImports(t, "./cmd/manager", "./controllers/...", "./internal/pod") {
		t.Errorf("%s links pod-side code: %s", pkg, strings.Join(path, " → "))
	}
}

// Tool packages describe invocations and parse output; whatever connects
// to a target from a pod lives on the runner's side. The examples of a
// user's own tool (workloads/custom/examples) are programs of their own
// that nothing links.
func TestWorkloadsHoldNoPodSideCode(t *testing.T) {
	for pkg, path := range podSideImports(t, "./workloads/...") {
		if !strings.HasPrefix(pkg, module+"/workloads/custom/examples/") {
			t.Errorf("%s links pod-side code: %s", pkg, strings.Join(path, " → "))
		}
	}
}

// The rule sees what it forbids: the runner links every driver and the
// query engine.
func TestImportRuleSeesTheRunnersDrivers(t *testing.T) {
	found := map[string]bool{}
	for _, pkg := range goList(t, "-deps", "./cmd/runner") {
		found[forbidden(pkg)] = true
	}
	for _, p := range podSide {
		if !found[p] {
			t.Errorf("cmd/runner links no %s: the rule would not see it either", p)
		}
	}
	if path := podSideImports(t, "./cmd/runner")[module+"/cmd/runner"]; len(path) < 2 {
		t.Errorf("no chain of imports found from the runner to pod-side code: %v", path)
	}
}

// podSideImports returns, for each package of the patterns that links
// pod-side code, one chain of imports from it to the first such package.
func podSideImports(t *testing.T, patterns ...string) map[string][]string {
	t.Helper()
	roots := goList(t, append([]string{"-f", "{{.ImportPath}}"}, patterns...)...)
	imports := map[string][]string{}
	for _, line := range goList(t, append([]string{"-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, patterns...)...) {
		fields := strings.Fields(line)
		imports[fields[0]] = fields[1:]
	}
	out := map[string][]string{}
	for _, root := range roots {
		if path := chainTo(root, imports); path != nil {
			out[root] = path
		}
	}
	return out
}

// chainTo finds, breadth first, the shortest chain of imports from root to
// a pod-side package, or nil.
func chainTo(root string, imports map[string][]string) []string {
	prev := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if forbidden(pkg) != "" {
			var path []string
			for p := pkg; p != ""; p = prev[p] {
				path = append(path, p)
			}
			slices.Reverse(path)
			return path
		}
		for _, next := range imports[pkg] {
			if _, seen := prev[next]; !seen {
				prev[next] = pkg
				queue = append(queue, next)
			}
		}
	}
	return nil
}

// forbidden is the pod-side prefix a package is under, or "".
func forbidden(pkg string) string {
	for _, p := range podSide {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return p
		}
	}
	return ""
}

func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}
