package stress

import (
	"context"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A second of one CPU worker, 64 MiB kept touched and a disk worker: the
// CPU shows in the process's time, the memory in its resident set, the
// worker synced its writes and left no file behind, and it ended on time.
func TestStressWorkers(t *testing.T) {
	dir := t.TempDir()
	rss0 := residentBytes(t)
	start := time.Now()
	rep, err := Run(context.Background(), Options{CPUWorkers: 1, MemoryBytes: 64 << 20, DiskWorkers: 1, Dir: dir, Duration: time.Second}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("ran %s for a second", took)
	}
	if runtime.NumCPU() >= 2 && rep.CPUSeconds < 0.6 {
		t.Errorf("one CPU worker for a second used %.2f CPU seconds", rep.CPUSeconds)
	}
	if rep.MemoryBytes != 64<<20 || residentBytes(t)-rss0 < 32<<20 && peakBytes(t) < rss0+48<<20 {
		t.Errorf("memory %d bytes touched; resident %d → %d, peak %d", rep.MemoryBytes, rss0, residentBytes(t), peakBytes(t))
	}
	if rep.DiskSyncs < 1 || rep.DiskBytesWritten < 1<<20 {
		t.Errorf("disk: %d syncs, %d bytes", rep.DiskSyncs, rep.DiskBytesWritten)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
}

// Cancelling stops the workers at once.
func TestStressStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	if _, err := Run(ctx, Options{CPUWorkers: 2, Duration: time.Minute}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("stopped %s after its start, cancelled after 200 ms", took)
	}
}

func residentBytes(t *testing.T) int64 { return statusKB(t, "VmRSS:") << 10 }
func peakBytes(t *testing.T) int64     { return statusKB(t, "VmHWM:") << 10 }

func statusKB(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
