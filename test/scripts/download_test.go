// Package scripts tests the hack scripts' behaviour that a fresh machine
// depends on, against local servers.
package scripts

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// tgz is a gzipped tar of one executable file.
func tgz(t *testing.T, name string, content []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(content))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// download_checked keeps a file whose SHA-256 matches the published sum
// (a bare sum, or "sum  name" lines), refuses one that does not (and
// writes nothing), and gives up at once on a host it cannot reach.
func TestDownloadChecked(t *testing.T) {
	good := []byte("the released binary")
	files := map[string][]byte{
		"/bin/tool":        good,
		"/bin/tool.sha256": []byte(sum(good) + "\n"),
		"/SUMS":            []byte("0000  other.tar.gz\n" + sum(good) + "  tool\n"),
		"/BADSUMS":         []byte(sum([]byte("something else")) + "  tool\n"),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	lib := filepath.Join(testutil.RepoRoot(), "hack", "lib", "download.sh")
	run := func(args ...string) (string, error) {
		out, err := exec.Command("bash", append([]string{"-c", `. "$0"; download_checked "$@"`, lib}, args...)...).CombinedOutput()
		return string(out), err
	}
	dir := t.TempDir()
	for name, c := range map[string]struct {
		url, sums, name string
		ok              bool
	}{
		"a bare sum":               {srv.URL + "/bin/tool", srv.URL + "/bin/tool.sha256", "", true},
		"a sums file":              {srv.URL + "/bin/tool", srv.URL + "/SUMS", "tool", true},
		"a sum that differs":       {srv.URL + "/bin/tool", srv.URL + "/BADSUMS", "tool", false},
		"no sums file":             {srv.URL + "/bin/tool", srv.URL + "/missing", "", false},
		"no such file":             {srv.URL + "/bin/missing", srv.URL + "/SUMS", "missing", false},
		"a host that is not there": {"http://dbperf-no-such-host.invalid/tool", "http://dbperf-no-such-host.invalid/SUMS", "", false},
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			start := time.Now()
			msg, err := run(c.url, c.sums, out, c.name)
			if (err == nil) != c.ok {
				t.Fatalf("ok %v, want %v: %s", err == nil, c.ok, msg)
			}
			got, rerr := os.ReadFile(out)
			if c.ok && (rerr != nil || !bytes.Equal(got, good)) {
				t.Errorf("kept %q (%v)", got, rerr)
			}
			if !c.ok && rerr == nil {
				t.Errorf("wrote %s although the download was refused", out)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s to give up", d)
			}
			if left, _ := filepath.Glob(out + ".*"); len(left) > 0 {
				t.Errorf("left %v behind", left)
			}
		})
	}
}

// build-helm.sh takes helm's released archive from a mirror when it is
// there and its sum matches, without building anything.
func TestBuildHelmDownloadsTheRelease(t *testing.T) {
	goos, goarch := os.Getenv("GOOS"), os.Getenv("GOARCH")
	if goos == "" {
		out, _ := exec.Command("go", "env", "GOOS", "GOARCH").Output()
		f := strings.Fields(string(out))
		goos, goarch = f[0], f[1]
	}
	bin := []byte("#!/bin/sh\necho helm from the mirror\n")
	archive := tgz(t, goos+"-"+goarch+"/helm", bin)
	name := "/helm-v3.19.5-" + goos + "-" + goarch + ".tar.gz"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case name:
			_, _ = w.Write(archive)
		case name + ".sha256sum":
			_, _ = w.Write([]byte(sum(archive) + "  " + strings.TrimPrefix(name, "/") + "\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cache := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(testutil.RepoRoot(), "hack", "build-helm.sh"))
	cmd.Env = append(os.Environ(), "DBPERF_CACHE="+cache, "HELM_RELEASE_URL="+srv.URL)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "downloaded helm v3.19.5 (SHA-256 checked)") {
		t.Fatalf("%v\n%s", err, out)
	}
	helm := strings.TrimSpace(string(out[strings.LastIndex(strings.TrimSpace(string(out)), "\n")+1:]))
	if got, err := exec.Command(helm).Output(); err != nil || string(got) != "helm from the mirror\n" {
		t.Errorf("%s: %q %v", helm, got, err)
	}
}
