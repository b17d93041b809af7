package runner

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// CPUReader reads the CPU time used by the container the runner is in.
type CPUReader struct {
	// Root is the cgroup mount, /sys/fs/cgroup in a container.
	Root string
}

// Usage returns the CPU time the cgroup has used, and which cgroup version
// it came from ("cgroup2", "cgroup1"); ok is false when neither is readable.
func (c CPUReader) Usage() (used time.Duration, source string, ok bool) {
	if v, ok := readKey(filepath.Join(c.Root, "cpu.stat"), "usage_usec"); ok {
		return time.Duration(v) * time.Microsecond, "cgroup2", true
	}
	for _, dir := range []string{"cpuacct", "cpu,cpuacct", "cpuacct,cpu"} {
		if v, ok := readInt(filepath.Join(c.Root, dir, "cpuacct.usage")); ok {
			return time.Duration(v), "cgroup1", true
		}
	}
	return 0, "", false
}

// AvailableCPUs is how many CPUs the container may use: its CPU limit
// (quota over period), else its cpuset, else the machine's.
func (c CPUReader) AvailableCPUs() float64 {
	if raw, err := os.ReadFile(filepath.Join(c.Root, "cpu.max")); err == nil {
		f := strings.Fields(string(raw))
		if len(f) == 2 && f[0] != "max" {
			q, err1 := strconv.ParseFloat(f[0], 64)
			p, err2 := strconv.ParseFloat(f[1], 64)
			if err1 == nil && err2 == nil && p > 0 {
				return q / p
			}
		}
	}
	for _, dir := range []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"} {
		q, ok1 := readInt(filepath.Join(c.Root, dir, "cpu.cfs_quota_us"))
		p, ok2 := readInt(filepath.Join(c.Root, dir, "cpu.cfs_period_us"))
		if ok1 && ok2 && q > 0 && p > 0 {
			return float64(q) / float64(p)
		}
	}
	if raw, err := os.ReadFile(filepath.Join(c.Root, "cpuset.cpus.effective")); err == nil {
		if n := countCPUs(strings.TrimSpace(string(raw))); n > 0 {
			return float64(n)
		}
	}
	return float64(runtime.NumCPU())
}

// countCPUs counts a cpuset list such as "0-3,8,10-11".
func countCPUs(list string) int {
	n := 0
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

func readInt(path string) (int64, bool) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	return v, err == nil
}

func readKey(path, key string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, _ := strings.Cut(s.Text(), " ")
		if k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
