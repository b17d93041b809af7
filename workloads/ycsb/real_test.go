package ycsb

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// realCommand adapts an invocation built for the image (/opt/ycsb,
// /etc/dbperf/workload) to the jars from Maven Central and a temporary
// directory, changing nothing else of the command line.
func realCommand(t *testing.T, inv workloads.Invocation, lib string) []string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range inv.Files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var cmd []string
	for _, a := range inv.Command {
		a = strings.ReplaceAll(a, ycsbHome+"/conf:"+ycsbHome+"/lib/*", filepath.Join(lib, "*"))
		a = strings.ReplaceAll(a, workloads.FilesDir, dir)
		cmd = append(cmd, a)
	}
	return cmd
}

// The real YCSB 0.17.0 client (site.ycsb:core from Maven Central, fetched by
// hack/fetch-ycsb.sh) runs its client loop against BasicDB with the command
// line and property file the operator builds, through dbperf-runner; the
// parser reads its real report. YCSB_LIB names the jars (hack/test.sh sets it).
func TestRealYCSBClientThroughTheRunner(t *testing.T) {
	lib := os.Getenv("YCSB_LIB")
	if lib == "" {
		t.Skip("YCSB_LIB is not set (hack/test.sh fetches YCSB 0.17.0 from Maven Central)")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Fatal("java is not installed (bash hack/install-deps.sh installs default-jre-headless)")
	}
	spec := &benchv1.WorkloadSpec{YCSB: &benchv1.YCSBWorkload{Binding: "basic", Workload: "a", RecordCount: 1000, OperationCount: 20000,
		Threads: []int32{4}, Percentiles: []string{"99.9"}, Properties: map[string]string{"basicdb.verbose": "false"}}}
	for _, phase := range []struct {
		name    string
		inv     workloads.Invocation
		prepare bool
	}{
		{"load", command(spec.YCSB, workloads.Endpoint{}, "-load", 2), true},
		{"run", YCSB{}.Run(spec, workloads.Endpoint{}, YCSB{}.Steps(spec)[0]), false},
	} {
		t.Run(phase.name, func(t *testing.T) {
			var out bytes.Buffer
			summary := filepath.Join(t.TempDir(), "summary")
			r := runner.Exec(context.Background(), runner.Options{Parser: YCSB{}, Prepare: phase.prepare,
				Command: realCommand(t, phase.inv, lib), SummaryFile: summary, Stdout: &out})
			if r.Verdict != results.Succeeded {
				t.Fatalf("verdict %s %v\n%s", r.Verdict, r.Reasons, out.String())
			}
			if phase.prepare {
				return
			}
			ops, _ := r.Get(results.Key{Name: "opsPerSecond", Operation: "OVERALL"})
			reads, _ := r.Get(results.Key{Name: "operations", Operation: "READ"})
			updates, _ := r.Get(results.Key{Name: "operations", Operation: "UPDATE"})
			_, p999 := r.Get(results.Key{Name: "latencyP999Millis", Operation: "READ"})
			errPct, _ := r.Get(results.Key{Name: "errorPercent"})
			if ops.Value <= 0 || reads.Value+updates.Value != 20000 || !p999 || errPct.Value != 0 {
				t.Errorf("throughput %v, %v reads + %v updates (want 20000), p99.9 present %v, errors %v %%\n%s",
					ops.Value, reads.Value, updates.Value, p999, errPct.Value, out.String())
			}
		})
	}
}
