package runner

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// FatalOutput is implemented by the parsers of tools that can print a fatal
// error and then hang instead of exiting (memtier_benchmark 2.1.1 after
// "error: authentication failed"). A line it recognises arms the watchdog.
// It is checked with a type assertion on the workload's Parser.
type FatalOutput interface {
	// FatalOutput reports whether line says the tool can no longer measure.
	FatalOutput(line string) bool
}

// StatusOutput is implemented by the parsers of tools that print a status
// line on a timer whether or not they make progress (memtier's "[RUN #1 33%,
// 1 secs]  2 threads: 0 ops, …" once a second, also while hung). Such a line
// is progress only when the count of work it reports has moved.
type StatusOutput interface {
	// StatusCount returns the work done so far that a status line reports
	// (operations), and false when line is not a status line.
	StatusCount(line string) (float64, bool)
}

// Watchdog stops a tool that has stopped making progress. Progress is output
// (on stdout or stderr; a status line only when its count moved) or a change
// of a result file. Zero durations disable their rule.
type Watchdog struct {
	// AfterFatal is the time without progress allowed after a line the
	// parser calls fatal.
	AfterFatal time.Duration
	// Always is the time without progress allowed at any moment. Off by
	// default: pgbench without --progress and HammerDB during a timed run
	// are silent for minutes while measuring correctly.
	Always time.Duration
}

func (w Watchdog) enabled() bool { return w.AfterFatal > 0 || w.Always > 0 }

// pollEvery checks ten times per shortest period, between 50 ms and 1 s.
func (w Watchdog) pollEvery() time.Duration {
	shortest := w.Always
	if shortest <= 0 || (w.AfterFatal > 0 && w.AfterFatal < shortest) {
		shortest = w.AfterFatal
	}
	return min(max(shortest/10, 50*time.Millisecond), time.Second)
}

// progress watches the tool's output (it is an io.Writer fed a copy) and its
// result files, and says when the Watchdog's limits are passed.
type progress struct {
	cfg    Watchdog
	fatal  FatalOutput
	status StatusOutput
	files  []string
	now    func() time.Time

	mu        sync.Mutex
	last      time.Time // of the last progress
	fatalLine string    // the first fatal line
	partial   []byte    // the line being written
	count     float64   // the last status line's count
	stamps    map[string]fileStamp
}

type fileStamp struct {
	size    int64
	modTime time.Time
}

func newProgress(cfg Watchdog, parser any, files []string, now func() time.Time) *progress {
	p := &progress{cfg: cfg, files: files, now: now, last: now(), stamps: map[string]fileStamp{}}
	p.fatal, _ = parser.(FatalOutput)
	p.status, _ = parser.(StatusOutput)
	for _, f := range files {
		p.stamps[f] = stampOf(f)
	}
	return p
}

// maxLine bounds the partial line kept: a fatal message is short.
const maxLine = 64 << 10

func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partial = append(p.partial, b...)
	moved := false
	for {
		i := bytes.IndexAny(p.partial, "\n\r")
		if i < 0 {
			break
		}
		moved = p.line(strings.TrimSpace(string(p.partial[:i]))) || moved
		p.partial = p.partial[i+1:]
	}
	if len(p.partial) > maxLine {
		p.partial, moved = p.partial[:0], true
	}
	// Bytes of a line still being written are progress unless the line
	// may turn out to be a status line (they are written whole anyway).
	if len(p.partial) > 0 && p.status == nil {
		moved = true
	}
	if moved {
		p.last = p.now()
	}
	return len(b), nil
}

// line judges one complete line and reports whether it is progress.
func (p *progress) line(l string) bool {
	if l == "" {
		return false
	}
	if p.fatal != nil && p.fatalLine == "" && p.fatal.FatalOutput(l) {
		p.fatalLine = l
	}
	if p.status != nil {
		if n, ok := p.status.StatusCount(l); ok {
			moved := n != p.count
			p.count = n
			return moved
		}
	}
	return true
}

// expired returns why the tool must be stopped now, or "".
func (p *progress) expired() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	for _, f := range p.files {
		if s := stampOf(f); s != p.stamps[f] {
			p.stamps[f], p.last = s, now
		}
	}
	idle := now.Sub(p.last)
	switch {
	case p.fatalLine != "" && p.cfg.AfterFatal > 0 && idle >= p.cfg.AfterFatal:
		return fmt.Sprintf("no progress for %s after the fatal error %q", p.cfg.AfterFatal, p.fatalLine)
	case p.cfg.Always > 0 && idle >= p.cfg.Always:
		return fmt.Sprintf("no progress (new output or a result-file change) for %s", p.cfg.Always)
	}
	return ""
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{size: -1}
	}
	return fileStamp{size: fi.Size(), modTime: fi.ModTime()}
}
