// Package testutil holds helpers shared by the tests: where the recorded
// tool outputs are, and polling with a deadline instead of sleeping.
package testutil

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// NeedEnv returns an environment variable that names a tool or its files
// (hack/test.sh sets them all), skipping the test when it is unset: the
// test can only run with the real thing.
func NeedEnv(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Skipf("%s is not set (hack/test.sh sets it)", name)
	}
	return v
}

// FixturesDir returns test/fixtures/<tool>: real outputs of each tool, with
// their provenance in test/fixtures/SOURCES.md; DBPERF_FIXTURES names
// another root (to try the parsers on outputs of one's own).
func FixturesDir(t testing.TB, tool string) string {
	t.Helper()
	root := os.Getenv("DBPERF_FIXTURES")
	if root == "" {
		root = filepath.Join(RepoRoot(), "test", "fixtures")
	}
	dir := filepath.Join(root, tool)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("fixtures for %s not found at %s (set DBPERF_FIXTURES): %v", tool, dir, err)
	}
	return dir
}

// EachFixture runs f as a subtest for every file of a tool's fixtures, with
// the expectation listed for it; a fixture without one fails, so a new
// fixture cannot go untested.
func EachFixture[W any](t *testing.T, tool string, want map[string]W, f func(t *testing.T, name string, raw []byte, w W)) {
	t.Helper()
	dir := FixturesDir(t, tool)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for fixture %s", name)
			}
			raw, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			f(t, name, raw, w)
		})
	}
}

// ReadFixture returns one fixture file of a tool.
func ReadFixture(t testing.TB, tool, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(FixturesDir(t, tool), name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
