package testutil

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// ReadProcStat returns the machine's idle and total CPU ticks (/proc/stat's
// first line), what a node_exporter's figures are checked against.
func ReadProcStat(t testing.TB) [2]float64 {
	t.Helper()
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	var idle, total float64
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseFloat(f, 64)
		if i >= 8 { // guest time is already in user time
			break
		}
		total += v
		if i == 3 { // idle (node_exporter's idle; iowait counts as busy)
			idle = v
		}
	}
	return [2]float64{idle, total}
}

// BusyPercent is the machine's busy share between two ReadProcStat.
func BusyPercent(start, end [2]float64) float64 {
	return 100 * (1 - (end[0]-start[0])/(end[1]-start[1]))
}

// ReadDiskWrittenBytes returns the bytes written to each block device
// (/proc/diskstats' sectors written, of 512 bytes whatever the device's).
func ReadDiskWrittenBytes(t testing.TB) map[string]float64 {
	t.Helper()
	data, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		v, _ := strconv.ParseFloat(f[9], 64)
		out[f[2]] = 512 * v
	}
	return out
}

// ProcSampler reads /proc/stat and /proc/diskstats every interval until
// the test ends, so that a check can ask afterwards what the machine did
// over any window (a measurement's, known only once it ended), each
// counter interpolated linearly at the window's edges.
type ProcSampler struct {
	pids    []int
	mu      sync.Mutex
	samples []procSample
}

type procSample struct {
	at          time.Time
	idle, total float64
	written     map[string]float64
	cpu         map[int]float64 // CPU seconds of each of pids
}

// StartProcSampler samples every interval until the test ends, and the
// CPU time of each of pids (/proc/<pid>/stat) beside the machine's.
func StartProcSampler(t testing.TB, every time.Duration, pids ...int) *ProcSampler {
	t.Helper()
	p := &ProcSampler{pids: pids}
	p.take(t)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				p.take(t)
			}
		}
	}()
	t.Cleanup(func() { close(done); <-stopped })
	return p
}

func (p *ProcSampler) take(t testing.TB) {
	stat, disk := ReadProcStat(t), ReadDiskWrittenBytes(t)
	cpu := make(map[int]float64, len(p.pids))
	for _, pid := range p.pids {
		if v, err := ProcessCPUSeconds(pid); err == nil {
			cpu[pid] = v
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.samples = append(p.samples, procSample{at: time.Now(), idle: stat[0], total: stat[1], written: disk, cpu: cpu})
}

// at interpolates one counter of the samples at t; false when t is not
// between two samples.
func (p *ProcSampler) at(t time.Time, v func(procSample) float64) (float64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := 1; i < len(p.samples); i++ {
		a, b := p.samples[i-1], p.samples[i]
		if t.Before(a.at) || t.After(b.at) {
			continue
		}
		f := float64(t.Sub(a.at)) / float64(max(b.at.Sub(a.at), 1))
		return v(a) + f*(v(b)-v(a)), true
	}
	return 0, false
}

// BusyCoreSeconds is the machine's busy CPU time (all but idle) between
// from and to, in core-seconds; false when the window is not sampled.
func (p *ProcSampler) BusyCoreSeconds(from, to time.Time) (float64, bool) {
	busy := func(s procSample) float64 { return s.total - s.idle }
	a, ok1 := p.at(from, busy)
	b, ok2 := p.at(to, busy)
	return (b - a) / userHZ, ok1 && ok2
}

// ProcessCores is the mean CPU, in cores, that process pid (one of the
// sampler's pids) used between from and to; false when the window is not
// sampled.
func (p *ProcSampler) ProcessCores(pid int, from, to time.Time) (float64, bool) {
	cpu := func(s procSample) float64 { return s.cpu[pid] }
	a, ok1 := p.at(from, cpu)
	b, ok2 := p.at(to, cpu)
	if !ok1 || !ok2 || !to.After(from) {
		return 0, false
	}
	return (b - a) / to.Sub(from).Seconds(), true
}

// WrittenBytes is what was written to the devices between from and to.
func (p *ProcSampler) WrittenBytes(devices []string, from, to time.Time) (float64, bool) {
	w := func(s procSample) float64 {
		var n float64
		for _, d := range devices {
			n += s.written[d]
		}
		return n
	}
	a, ok1 := p.at(from, w)
	b, ok2 := p.at(to, w)
	return b - a, ok1 && ok2
}

// BusyPercent is the machine's busy share of its CPU time between from and
// to (what node_exporter's cpu seconds give for the same interval); false
// when the window is not sampled.
func (p *ProcSampler) BusyPercent(from, to time.Time) (float64, bool) {
	busy := func(s procSample) float64 { return s.total - s.idle }
	total := func(s procSample) float64 { return s.total }
	b0, ok1 := p.at(from, busy)
	b1, ok2 := p.at(to, busy)
	t0, ok3 := p.at(from, total)
	t1, ok4 := p.at(to, total)
	if !ok1 || !ok2 || !ok3 || !ok4 || t1 <= t0 {
		return 0, false
	}
	return 100 * (b1 - b0) / (t1 - t0), true
}
