// Package testutil holds helpers shared by the tests: where the shared tool
// fixtures are, and polling with a deadline instead of sleeping.
package testutil

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// FixturesDir returns ../shared/fixtures/<tool> beside the repository, or
// the directory DBPERF_FIXTURES names.
func FixturesDir(t testing.TB, tool string) string {
	t.Helper()
	root := os.Getenv("DBPERF_FIXTURES")
	if root == "" {
		_, file, _, _ := runtime.Caller(0)
		root = filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "fixtures")
	}
	dir := filepath.Join(root, tool)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("fixtures for %s not found at %s (set DBPERF_FIXTURES): %v", tool, dir, err)
	}
	return dir
}

// Eventually calls f until it returns nil or the timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		if err = f(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not true after %s: %v", what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
