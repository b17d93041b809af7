package hammerdb

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// The real hammerdbcli 4.12 (hack/build-tools.sh; HAMMERDB_HOME
// names its directory) runs the schema build invocation through the runner,
// in a fresh pod's layout where the output directory does not exist yet:
// HammerDB must open its jobs database in $TMP, not fall back to /tmp. It
// opens it at start-up, so no database server is needed (the build then
// fails to connect, which is not what is tested here).
func TestRealSchemaBuildWritesIntoTMP(t *testing.T) {
	home := testutil.NeedEnv(t, "HAMMERDB_HOME") // HammerDB 4.12 built by hack/build-tools.sh
	inv := HammerDB{}.Prepare(seed(benchv1.HammerDBPostgres, 1), pod.Endpoint{Host: "127.0.0.1", Port: int32(testutil.FreePort(t)),
		Username: secretKey("s", "username"), Password: secretKey("s", "password")})
	dir := t.TempDir()
	files, out := filepath.Join(dir, "files"), filepath.Join(dir, "out") // out is not created: the runner must make it
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range inv.Files {
		if err := os.WriteFile(filepath.Join(files, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	local := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, pod.FilesDir, files), pod.OutputDir, out)
	}
	var cmd, results []string
	for _, a := range inv.Command {
		cmd = append(cmd, local(a))
	}
	for _, f := range inv.ResultFiles {
		results = append(results, local(f))
	}
	// hammerdbcli runs from its own directory; a wrapper stands for the
	// image's working directory and for the kubelet's environment.
	wrapper := filepath.Join(dir, "hammerdbcli")
	script := "#!/bin/sh\ncd " + home + " && exec ./hammerdbcli \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd[0] = wrapper
	for _, e := range inv.Env {
		if e.Value != "" {
			t.Setenv(e.Name, local(e.Value))
		} else {
			t.Setenv(e.Name, "x")
		}
	}
	if _, err := exec.LookPath("tclsh8.6"); err != nil {
		t.Fatal("tclsh8.6 is not installed (hack/build-tools.sh installs tcl)")
	}
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runner.Exec(ctx, runner.Options{Parser: HammerDB{}, Prepare: true, Command: cmd, ResultFiles: results, Timeout: time.Minute, Stdout: &log})
	if _, err := os.Stat(filepath.Join(out, JobsDatabase)); err != nil {
		t.Errorf("HammerDB did not open its jobs database in $TMP (%s): %v\n%s", out, err, log.String())
	}
	if !strings.Contains(log.String(), "Jobs on-disk database "+filepath.Join(out, JobsDatabase)) {
		t.Errorf("HammerDB did not say it uses %s:\n%s", out, log.String())
	}
}
