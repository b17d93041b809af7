// Package profile takes an on-CPU profile of a database server's
// processes over a measurement's steady window: Linux perf samples every
// CPU's stack at a fixed frequency of CPU time (the cpu-clock event, which
// works without hardware counters, in virtual machines and containers),
// and the samples of the server's processes — the one given and every
// process it started, which for PostgreSQL are its backends — are folded
// into stacks, the format flame graphs are drawn from.
//
// perf is run, not reimplemented: `perf record -a -g` for the window, then
// `perf script` reads its stacks back with their symbols. It needs what
// perf needs to sample every CPU (root, CAP_PERFMON, or
// kernel.perf_event_paranoid ≤ 0), which is why it is opt-in.
package profile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Event is the perf event sampled: CPU time, by the kernel's clock.
const Event = "cpu-clock"

// DefaultFrequencyHz is the default sampling frequency per CPU second:
// 99 rather than 100 so that the samples do not move in lockstep with
// activity that runs at a round period.
const DefaultFrequencyHz = 99

// Options configure a profile.
type Options struct {
	// Perf is perf's path; "perf" from PATH when empty.
	Perf string
	// FrequencyHz is the sampling frequency; DefaultFrequencyHz when 0.
	FrequencyHz int
	// Root is the server's process: it and every process it started are
	// profiled. Zero: the process listening on Host:Port of this host
	// (ServerProcess).
	Root int
	Host string
	Port int
	// ProcRoot is where /proc is (tests); "/proc" when empty.
	ProcRoot string
}

// Recording is a profile being recorded.
type Recording struct {
	o     Options
	dir   string
	cmd   *exec.Cmd
	out   lockedBuffer
	waitc chan error
}

// Start starts perf recording every CPU. The server's processes are
// found afterwards from perf's own record of every fork (those running at
// the start, and those started in the window, a backend that lived for a
// millisecond included).
func Start(ctx context.Context, o Options) (*Recording, error) {
	if o.Root <= 0 {
		root, err := ServerProcess(o.ProcRoot, o.Host, o.Port)
		if err != nil {
			return nil, err
		}
		o.Root = root
	}
	if o.Perf == "" {
		o.Perf = "perf"
	}
	if o.FrequencyHz <= 0 {
		o.FrequencyHz = DefaultFrequencyHz
	}
	if o.ProcRoot == "" {
		o.ProcRoot = "/proc"
	}
	dir, err := os.MkdirTemp("", "dbperf-profile-")
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(o.ProcRoot, strconv.Itoa(o.Root))); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("the server's process %d is not running on this host", o.Root)
	}
	r := &Recording{o: o, dir: dir, waitc: make(chan error, 1)}
	// Not CommandContext: perf is stopped by SIGINT, which makes it write
	// its data's header; a killed perf leaves a file perf script refuses.
	r.cmd = exec.Command(o.Perf, "record", "-e", Event, "-F", strconv.Itoa(o.FrequencyHz), "-g", "-a", "-q", "-o", filepath.Join(dir, "perf.data")) //nolint:gosec // the runner's own perf
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("perf: %w", err)
	}
	go func() { r.waitc <- r.cmd.Wait() }()
	if err := r.sampling(ctx); err != nil {
		r.kill()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return r, nil
}

// sampling waits until perf samples: it has opened its events, one per
// CPU (its descriptors "anon_inode:[perf_event]"), which takes it a few
// hundred milliseconds; a window's start is not counted before then.
func (r *Recording) sampling(ctx context.Context) error {
	fdDir := filepath.Join(r.o.ProcRoot, strconv.Itoa(r.cmd.Process.Pid), "fd")
	want := max(runtime.NumCPU(), 1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-r.waitc:
			r.waitc <- err
			return fmt.Errorf("perf record ended at its start (%w): %s", err, tail(r.out.String()))
		default:
		}
		fds, _ := os.ReadDir(fdDir)
		n := 0
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && strings.Contains(link, "perf_event") {
				n++
			}
		}
		if n >= want {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("perf record opened %d of %d CPUs' events in 10 s: %s", n, want, tail(r.out.String()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop ends the recording and folds the server's samples; the recording's
// files are removed. An error says why there is no profile (perf could
// not sample, its data could not be read).
func (r *Recording) Stop(ctx context.Context) (*results.Profile, error) {
	defer func() { _ = os.RemoveAll(r.dir) }()
	if r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(os.Interrupt)
	}
	select {
	case err := <-r.waitc:
		if err != nil && !interrupted(err) {
			return nil, fmt.Errorf("perf record: %w: %s", err, tail(r.out.String()))
		}
	case <-time.After(30 * time.Second):
		r.kill()
		return nil, errors.New("perf record did not stop within 30 s of SIGINT")
	case <-ctx.Done():
		r.kill()
		return nil, ctx.Err()
	}
	script := exec.CommandContext(ctx, r.o.Perf, "script", "-i", filepath.Join(r.dir, "perf.data"), "-F", "comm,pid,tid,ip,sym,dso", "--show-task-events") //nolint:gosec // the runner's own perf
	var stderr strings.Builder
	script.Stderr = &stderr
	stdout, err := script.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := script.Start(); err != nil {
		return nil, fmt.Errorf("perf script: %w", err)
	}
	p, ferr := Fold(stdout, r.o.Root)
	if err := script.Wait(); err != nil {
		return nil, fmt.Errorf("perf script: %w: %s", err, tail(stderr.String()))
	}
	cost := 0.0
	for _, ps := range []*os.ProcessState{r.cmd.ProcessState, script.ProcessState} {
		if ps != nil {
			cost += (ps.UserTime() + ps.SystemTime()).Seconds()
		}
	}
	if ferr != nil {
		return nil, ferr
	}
	p.FrequencyHz = float64(r.o.FrequencyHz)
	p.ProfilerCPUSeconds = cost
	return p, nil
}

// kill ends perf at once, its data given up, and waits for it.
func (r *Recording) kill() {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	err := <-r.waitc
	_ = err // killed: its status says nothing more
}

// lockedBuffer is perf's output, written by exec's copying goroutine and
// read for an error's message while perf may still run.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// interrupted says whether perf ended on the SIGINT it was sent (it
// exits 0 then, or is reported as killed by the signal).
func interrupted(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
			return true
		}
	}
	return false
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 400 {
		s = "…" + s[len(s)-400:]
	}
	return s
}

// Fold reads `perf script -F comm,pid,tid,ip,sym,dso --show-task-events`
// and folds the stacks of the root process and its descendants: each
// sample is a header line ("comm pid/tid") and its frames, innermost first
// ("address symbol (object)"), then a blank line; a fork is a line
// "comm pid/tid PERF_RECORD_FORK(child:tid):(parent:tid)", in time order
// with the samples (perf writes the processes running at its start as
// forks first). A frame without a symbol is named by its object
// ("[postgres]", "[unknown]"). The stack is "comm;outermost;...;innermost".
func Fold(r io.Reader, root int) (*results.Profile, error) {
	p := &results.Profile{Event: Event}
	counts := map[string]int{}
	seen := map[int]bool{}
	server := map[int]bool{root: true}
	var frames []string
	var comm string
	var pid int
	inSample := false
	flush := func() {
		if !inSample {
			return
		}
		inSample = false
		p.HostSamples++
		if !server[pid] {
			return
		}
		p.Samples++
		seen[pid] = true
		var b strings.Builder
		b.WriteString(comm)
		for i := len(frames) - 1; i >= 0; i-- {
			b.WriteByte(';')
			b.WriteString(frames[i])
		}
		counts[b.String()]++
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case strings.Contains(line, "PERF_RECORD_"):
			flush()
			if child, parent, ok := forked(line); ok && server[parent] {
				server[child] = true
			}
		case line[0] != ' ' && line[0] != '\t':
			flush()
			f := strings.Fields(line)
			if len(f) < 2 {
				return nil, fmt.Errorf("perf script: a sample's header without a pid: %q", line)
			}
			pidTid := f[len(f)-1]
			ps, _, _ := strings.Cut(pidTid, "/")
			n, err := strconv.Atoi(ps)
			if err != nil {
				return nil, fmt.Errorf("perf script: a sample's header without a pid: %q", line)
			}
			comm, pid, frames, inSample = strings.Join(f[:len(f)-1], " "), n, frames[:0], true
		default:
			if inSample {
				frames = append(frames, frameName(strings.TrimSpace(line)))
			}
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("perf script: %w", err)
	}
	p.Processes = len(seen)
	for s, n := range counts {
		p.Stacks = append(p.Stacks, results.FoldedStack{Stack: s, Samples: n})
	}
	sort.Slice(p.Stacks, func(i, j int) bool {
		if p.Stacks[i].Samples != p.Stacks[j].Samples {
			return p.Stacks[i].Samples > p.Stacks[j].Samples
		}
		return p.Stacks[i].Stack < p.Stacks[j].Stack
	})
	if len(p.Stacks) > results.MaxProfileStacks {
		for _, s := range p.Stacks[results.MaxProfileStacks:] {
			p.OtherSamples += s.Samples
		}
		p.Stacks = p.Stacks[:results.MaxProfileStacks]
	}
	return p, nil
}

// forked reads a fork's child and parent processes from
// "... PERF_RECORD_FORK(child:tid):(parent:tid)".
func forked(line string) (child, parent int, ok bool) {
	_, rest, found := strings.Cut(line, "PERF_RECORD_FORK(")
	if !found {
		return 0, 0, false
	}
	c, rest, _ := strings.Cut(rest, ":")
	_, rest, _ = strings.Cut(rest, "(")
	pp, _, _ := strings.Cut(rest, ":")
	ci, err1 := strconv.Atoi(c)
	pi, err2 := strconv.Atoi(pp)
	return ci, pi, err1 == nil && err2 == nil
}

// frameName is a frame's symbol, or its object's name in brackets when
// perf has no symbol for it; ";" never appears in a name (it separates
// frames).
func frameName(frame string) string {
	_, rest, _ := strings.Cut(frame, " ") // the address
	rest = strings.TrimSpace(rest)
	sym, dso := rest, ""
	if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
		sym, dso = rest[:i], rest[i+2:len(rest)-1]
	}
	if j := strings.LastIndex(sym, "+0x"); j > 0 {
		sym = sym[:j]
	}
	if sym == "" || sym == "[unknown]" {
		if dso == "" || dso == "[unknown]" {
			sym = "[unknown]"
		} else {
			sym = "[" + filepath.Base(dso) + "]"
		}
	}
	return strings.ReplaceAll(sym, ";", ":")
}

// Functions are the profile's functions as diagnostic items: each one's
// self time (the samples it was the innermost frame of: these add up to
// the processes' CPU time) and its inclusive time (the samples it was
// anywhere in), the largest self times first; a function that never ran
// itself is left out.
func Functions(p *results.Profile) []results.DiagnosticItem {
	if p == nil {
		return nil
	}
	self, incl := map[string]int{}, map[string]int{}
	for _, s := range p.Stacks {
		frames := strings.Split(s.Stack, ";")[1:] // the process's name first
		if len(frames) == 0 {
			continue
		}
		self[frames[len(frames)-1]] += s.Samples
		once := map[string]bool{}
		for _, f := range frames {
			if !once[f] {
				once[f] = true
				incl[f] += s.Samples
			}
		}
	}
	var out []results.DiagnosticItem
	for name, n := range incl {
		if self[name] == 0 {
			continue // its time is in the functions it called
		}
		out = append(out, results.DiagnosticItem{Kind: results.DiagnosticFunction, Name: name, TimeMillis: p.Millis(self[name]),
			Figures: map[string]float64{"inclusiveMillis": p.Millis(n)}})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TimeMillis != out[j].TimeMillis {
			return out[i].TimeMillis > out[j].TimeMillis
		}
		return out[i].Name < out[j].Name
	})
	return out
}
