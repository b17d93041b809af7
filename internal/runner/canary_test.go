package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// The canary measures this machine's CPU and disk in about the time given,
// its figures metrics of the source canary, and leaves no file behind.
func TestCanaryMeasuresTheNode(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	ms, err := Canary(context.Background(), dir, 400*time.Millisecond)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s in %s", CanaryText(ms, nil), took)
	got := map[string]float64{}
	for _, m := range ms {
		if m.Source != results.SourceCanary || m.Direction != results.Neutral {
			t.Errorf("%s: source %q, direction %s", m.Name, m.Source, m.Direction)
		}
		got[m.Name] = m.Value
	}
	// SHA-256 runs at hundreds of MB/s on any server core; a disk (or
	// tmpfs) takes 1 MiB writes at more than 1 MB/s; an fsync takes more
	// than nothing and less than a second.
	if v := got[results.CanaryCPUMegabytesPerSecond]; v < 10 || v > 1e5 {
		t.Errorf("CPU %.1f MB/s", v)
	}
	if v := got[results.CanaryDiskWriteMegabytesPerSecond]; v < 1 {
		t.Errorf("disk writes %.1f MB/s", v)
	}
	if v, ok := got[results.CanaryDiskSyncMillis]; !ok || v < 0 || v > 1000 {
		t.Errorf("a write and its fsync: %.3f ms (%v)", v, ok)
	}
	// Bounded: about its time (each disk part may pass it by one write).
	if took > 3*time.Second {
		t.Errorf("a 400-ms canary took %s", took)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A directory the canary cannot write keeps the CPU figure and says which
// part it could not measure and where.
func TestCanaryWithoutADisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	ms, err := Canary(context.Background(), dir, 400*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "the canary's disk part") {
		t.Fatalf("error %v", err)
	}
	if len(ms) != 1 || ms[0].Name != results.CanaryCPUMegabytesPerSecond {
		t.Errorf("figures %+v, want the CPU's alone", ms)
	}
	if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
		t.Errorf("the canary made %s", dir)
	}
}
