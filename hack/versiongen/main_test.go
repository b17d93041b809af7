package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// copyPinned copies the files versiongen rewrites into a new root.
func copyPinned(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := []string{"VERSION"}
	for _, p := range pins {
		files = append(files, p.file)
	}
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "internal", "version"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func read(t *testing.T, root, file string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// A new version reaches every pin, and nothing of the old one is left on
// the project's images.
func TestSetVersionPinsEveryReference(t *testing.T) {
	root := copyPinned(t)
	if err := run(root, "v0.2.0-rc.1"); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"VERSION":                           {"v0.2.0-rc.1\n"},
		"charts/dbperf-operator/Chart.yaml": {"\nversion: 0.2.0-rc.1\n", "\nappVersion: \"v0.2.0-rc.1\"\n"},
		"config/manager/manager.yaml":       {"image: ghcr.io/dbperf-io/dbperf-operator:v0.2.0-rc.1\n", "--runner-image=ghcr.io/dbperf-io/dbperf-runner:v0.2.0-rc.1\n"},
		"config/manager/kustomization.yaml": {"- name: ghcr.io/dbperf-io/dbperf-operator\n  newTag: v0.2.0-rc.1\n"},
		"internal/version/release.go":       {"const Release = \"v0.2.0-rc.1\"\n"},
	}
	tag := regexp.MustCompile(`ghcr\.io/dbperf-io/dbperf-[a-z]+:(\S+)`)
	for file, wants := range want {
		got := read(t, root, file)
		for _, w := range wants {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q:\n%s", file, w, got)
			}
		}
		for _, m := range tag.FindAllStringSubmatch(got, -1) {
			if m[1] != "v0.2.0-rc.1" {
				t.Errorf("%s still names %s", file, m[0])
			}
		}
	}
}

func TestRefusesWhatIsNotARelease(t *testing.T) {
	for _, v := range []string{"0.2.0", "v0.2", "latest", "v0.2.0 ", "v01.2.3"} {
		if err := run(copyPinned(t), v); err == nil {
			t.Errorf("-set %q accepted", v)
		}
	}
}

// A pinned line that moved away fails the generator instead of leaving the
// file unpinned.
func TestAPinThatMatchesNothingFails(t *testing.T) {
	root := copyPinned(t)
	k := filepath.Join(root, "config/manager/kustomization.yaml")
	if err := os.WriteFile(k, []byte("resources:\n- manager.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(root, "")
	if err == nil || !strings.Contains(err.Error(), "kustomization.yaml") {
		t.Fatalf("got %v, want an error naming kustomization.yaml", err)
	}
}
