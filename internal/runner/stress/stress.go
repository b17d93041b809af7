// Package stress is a noisy neighbour's work (`dbperf-runner stress`, the
// stress pod of a noisyNeighbour disturbance): CPU workers spinning on a
// core each, memory allocated and kept touched, disk workers writing and
// fsyncing files, for a duration, and a report of what they did and what
// the process used.
package stress

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Options are the workers and how long they run.
type Options struct {
	CPUWorkers  int
	MemoryBytes int64
	DiskWorkers int
	// Dir is where the disk workers write their files.
	Dir      string
	Duration time.Duration
}

// Report is what the workers did; units are in the names.
type Report struct {
	WallSeconds float64 `json:"wallSeconds"`
	// CPUSeconds is the process's user and system CPU time.
	CPUSeconds         float64 `json:"cpuSeconds"`
	CPUWorkers         int     `json:"cpuWorkers"`
	CPULoops           int64   `json:"cpuLoops"`
	MemoryBytes        int64   `json:"memoryBytes"`
	DiskWorkers        int     `json:"diskWorkers"`
	DiskBytesWritten   int64   `json:"diskBytesWritten"`
	DiskSyncs          int64   `json:"diskSyncs"`
	DiskSyncsPerSecond float64 `json:"diskSyncsPerSecond"`
}

const (
	chunk     = 64 << 20 // memory is allocated in chunks
	page      = 4096
	block     = 1 << 20 // disk workers write blocks
	fileLimit = 256 << 20
)

// Run runs the workers until o.Duration has passed or ctx ends.
func Run(ctx context.Context, o Options, log io.Writer) (Report, error) {
	rep := Report{CPUWorkers: o.CPUWorkers, DiskWorkers: o.DiskWorkers}
	if o.Duration <= 0 {
		return rep, fmt.Errorf("no duration")
	}
	if n := o.CPUWorkers + 1; runtime.GOMAXPROCS(0) < n {
		runtime.GOMAXPROCS(n)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	start, cpu0 := time.Now(), cpuTime()
	fmt.Fprintf(log, "[dbperf-runner] stress: %d CPU workers, %d bytes of memory, %d disk workers in %s, for %s\n",
		o.CPUWorkers, o.MemoryBytes, o.DiskWorkers, o.Dir, o.Duration)
	var loops, written, syncs atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, o.DiskWorkers+1)
	for range o.CPUWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			x := uint64(88172645463325252)
			for ctx.Err() == nil {
				for range 1 << 16 { // xorshift: work the compiler keeps
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
				}
				loops.Add(1)
			}
			if x == 0 {
				fmt.Fprintln(io.Discard, x)
			}
		}()
	}
	if o.MemoryBytes > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var chunks [][]byte
			for left := o.MemoryBytes; left > 0 && ctx.Err() == nil; left -= chunk {
				chunks = append(chunks, make([]byte, min(left, chunk)))
			}
			var touched int64
			for _, c := range chunks {
				touched += int64(len(c))
			}
			rep.MemoryBytes = touched
			for v := byte(1); ctx.Err() == nil; v++ {
				for _, c := range chunks {
					for i := 0; i < len(c); i += page {
						c[i] = v
					}
				}
			}
			runtime.KeepAlive(chunks)
		}()
	}
	for i := range o.DiskWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := writer(ctx, filepath.Join(o.Dir, fmt.Sprintf("dbperf-stress-%d", i)), &written, &syncs); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	rep.WallSeconds = time.Since(start).Seconds()
	rep.CPUSeconds = (cpuTime() - cpu0).Seconds()
	rep.CPULoops, rep.DiskBytesWritten, rep.DiskSyncs = loops.Load(), written.Load(), syncs.Load()
	if rep.WallSeconds > 0 {
		rep.DiskSyncsPerSecond = float64(rep.DiskSyncs) / rep.WallSeconds
	}
	fmt.Fprintf(log, "[dbperf-runner] stress: ended after %.1f s: %.1f CPU seconds, %d bytes written, %d syncs\n",
		rep.WallSeconds, rep.CPUSeconds, rep.DiskBytesWritten, rep.DiskSyncs)
	return rep, <-errs
}

// writer writes and fsyncs blocks into file until ctx ends, rewinding at
// fileLimit, and removes the file.
func writer(ctx context.Context, file string, written, syncs *atomic.Int64) error {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("disk worker: %w", err)
	}
	defer os.Remove(file)
	defer f.Close()
	buf := make([]byte, block)
	for i := range buf {
		buf[i] = byte(i * 31)
	}
	var off int64
	for ctx.Err() == nil {
		if off >= fileLimit {
			off = 0
		}
		n, err := f.WriteAt(buf, off)
		if err != nil {
			return fmt.Errorf("disk worker: %w", err)
		}
		off += int64(n)
		written.Add(int64(n))
		if err := f.Sync(); err != nil {
			return fmt.Errorf("disk worker: %w", err)
		}
		syncs.Add(1)
	}
	return nil
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
