package runner

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Canary sizes: the CPU part hashes canaryBlock repeatedly; the disk part
// writes canaryWrite blocks, then times canarySync writes each followed by
// an fsync, canarySyncs at most.
const (
	canaryBlock  = 64 << 10
	canaryWrite  = 1 << 20
	canarySync   = 4 << 10
	canarySyncs  = 200
	canaryMinRun = 100 * time.Millisecond // the shortest part
)

// Canary measures this node for about d before the tool starts: the
// fixed work of results.CanaryCPUMegabytesPerSecond (half of d),
// results.CanaryDiskWriteMegabytesPerSecond (a quarter) and
// results.CanaryDiskSyncMillis (a quarter) in dir, whose file it removes.
// The figures are metrics of results.SourceCanary; a part that could not
// be measured (a read-only directory) is left out and said in the error,
// the others kept.
func Canary(ctx context.Context, dir string, d time.Duration) ([]results.Metric, error) {
	d = max(d, 4*canaryMinRun)
	var out []results.Metric
	add := func(name string, v float64, unit string) {
		out = append(out, results.Metric{Name: name, Value: v, Unit: unit, Direction: results.Neutral, Source: results.SourceCanary})
	}
	add(results.CanaryCPUMegabytesPerSecond, canaryCPU(ctx, d/2), "MB/s")
	f, err := os.CreateTemp(dir, ".dbperf-canary-*")
	if err != nil {
		return out, fmt.Errorf("the canary's disk part: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	mbps, err := canaryWrites(ctx, f, d/4)
	if err != nil {
		return out, fmt.Errorf("the canary's disk part in %s: %w", filepath.Dir(f.Name()), err)
	}
	add(results.CanaryDiskWriteMegabytesPerSecond, mbps, "MB/s")
	ms, err := canarySyncMillis(ctx, f, d/4)
	if err != nil {
		return out, fmt.Errorf("the canary's disk part in %s: %w", filepath.Dir(f.Name()), err)
	}
	add(results.CanaryDiskSyncMillis, ms, "ms")
	return out, nil
}

// canaryCPU is the SHA-256 throughput over a fixed buffer of one worker
// per CPU the container may use (GOMAXPROCS, which follows its cgroup
// limit) for d, in MB/s summed: what the node's CPUs give, including what
// other tenants take from them.
func canaryCPU(ctx context.Context, d time.Duration) float64 {
	workers := runtime.GOMAXPROCS(0)
	var hashed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, canaryBlock)
			for i := range buf {
				buf[i] = byte(i*131 + w)
			}
			for time.Since(start) < d && ctx.Err() == nil {
				sum := sha256.Sum256(buf)
				buf[0] ^= sum[0] // each block depends on the last: nothing to skip
				hashed.Add(canaryBlock)
			}
		}()
	}
	wg.Wait()
	return float64(hashed.Load()) / 1e6 / time.Since(start).Seconds()
}

// canaryWrites writes canaryWrite blocks to f for d, then flushes them
// to the device; the throughput counts the flush, in MB/s.
func canaryWrites(ctx context.Context, f *os.File, d time.Duration) (float64, error) {
	buf := make([]byte, canaryWrite)
	for i := range buf {
		buf[i] = byte(i * 31)
	}
	start := time.Now()
	var written int64
	for time.Since(start) < d && ctx.Err() == nil {
		n, err := f.WriteAt(buf, written)
		if err != nil {
			return 0, err
		}
		written += int64(n)
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return float64(written) / 1e6 / time.Since(start).Seconds(), nil
}

// canarySyncMillis is the median time of a canarySync write at the
// file's start and its fsync, over d (canarySyncs at most), in ms.
func canarySyncMillis(ctx context.Context, f *os.File, d time.Duration) (float64, error) {
	buf := make([]byte, canarySync)
	var took []float64
	start := time.Now()
	for (time.Since(start) < d || len(took) == 0) && len(took) < canarySyncs && ctx.Err() == nil {
		t := time.Now()
		if _, err := f.WriteAt(buf, int64(len(took)%16)*canarySync); err != nil {
			return 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, err
		}
		took = append(took, float64(time.Since(t).Microseconds())/1000)
	}
	if len(took) == 0 {
		return 0, ctx.Err()
	}
	slices.Sort(took)
	return took[len(took)/2], nil
}

// CanaryText is the canary's figures for the log.
func CanaryText(ms []results.Metric, err error) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%s %.4g %s", m.Name, m.Value, m.Unit))
	}
	if err != nil {
		parts = append(parts, err.Error())
	}
	return strings.Join(parts, ", ")
}
