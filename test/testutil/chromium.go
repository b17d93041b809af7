package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ChromiumDOM loads an HTML page written by render in headless Chromium
// (CHROMIUM, the browser hack/install-deps.sh installs) with fragment
// after its address ("#sort=5", or ""), lets its scripts run for 2 s of
// virtual time, and returns the DOM they left; "" with a log line when
// CHROMIUM is not set. When DBPERF_SCREENSHOT_DIR is set, a screenshot
// of the page is written there as shot (1400 px wide).
func ChromiumDOM(t testing.TB, fragment, shot string, render func(f *os.File) error) string {
	t.Helper()
	browser := os.Getenv("CHROMIUM")
	if browser == "" {
		t.Log("CHROMIUM not set: the page is not checked in a browser")
		return ""
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := render(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	headless := []string{"--headless", "--no-sandbox", "--disable-gpu"}
	out, err := exec.Command(browser, append(headless, "--user-data-dir="+filepath.Join(dir, "profile"),
		"--virtual-time-budget=2000", "--dump-dom", "file://"+page+fragment)...).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if to := os.Getenv("DBPERF_SCREENSHOT_DIR"); to != "" && shot != "" {
		if err := exec.Command(browser, append(headless, "--user-data-dir="+filepath.Join(dir, "profile-shot"), "--window-size=1400,2400",
			"--screenshot="+filepath.Join(to, shot), "file://"+page+fragment)...).Run(); err != nil {
			t.Logf("screenshot: %v", err)
		}
	}
	return string(out)
}
