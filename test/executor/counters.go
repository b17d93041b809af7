package executor

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The counters of a pod cgroup, read by both faces of the test kubelet:
// /stats/summary (stats.go) and cAdvisor's /metrics/cadvisor (cadvisor.go).

// cpuNanos is the cgroup's cumulative CPU time.
func (pc *podCgroup) cpuNanos() (uint64, error) {
	if !pc.v2 {
		return readUint(filepath.Join(pc.cpuDir, "cpuacct.usage"))
	}
	usec, err := statField(filepath.Join(pc.cpuDir, "cpu.stat"), "usage_usec")
	return usec * 1000, err
}

// cpuModes is the cgroup's cumulative CPU time in user and kernel mode, in
// seconds (v1: cpuacct.stat in USER_HZ ticks; v2: cpu.stat in µs).
func (pc *podCgroup) cpuModes() (user, system float64, err error) {
	file, userKey, systemKey, unit := "cpuacct.stat", "user", "system", float64(userHZ)
	if pc.v2 {
		file, userKey, systemKey, unit = "cpu.stat", "user_usec", "system_usec", 1e6
	}
	path := filepath.Join(pc.cpuDir, file)
	u, err := statField(path, userKey)
	if err != nil {
		return 0, 0, err
	}
	s, err := statField(path, systemKey)
	return float64(u) / unit, float64(s) / unit, err
}

// cfs is the cgroup's CPU quota per period (quota 0: none) and, with a
// quota, the periods run and those throttled (cpu.stat of the cpu
// controller, v1 and v2 alike).
type cfs struct {
	quotaMicros, periodMicros uint64
	periods, throttled        uint64
}

func (pc *podCgroup) cfs() (cfs, error) {
	var c cfs
	if pc.v2 {
		raw, err := os.ReadFile(filepath.Join(pc.cpuCtlDir, "cpu.max"))
		if err != nil {
			return c, err
		}
		f := strings.Fields(string(raw))
		if len(f) != 2 {
			return c, fmt.Errorf("cpu.max: unexpected %q", raw)
		}
		if f[0] != "max" {
			if c.quotaMicros, err = strconv.ParseUint(f[0], 10, 64); err != nil {
				return c, err
			}
		}
		if c.periodMicros, err = strconv.ParseUint(f[1], 10, 64); err != nil {
			return c, err
		}
	} else {
		raw, err := os.ReadFile(filepath.Join(pc.cpuCtlDir, "cpu.cfs_quota_us"))
		if err != nil {
			return c, err
		}
		if q, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64); err == nil && q > 0 {
			c.quotaMicros = uint64(q)
		}
		if c.periodMicros, err = readUint(filepath.Join(pc.cpuCtlDir, "cpu.cfs_period_us")); err != nil {
			return c, err
		}
	}
	if c.quotaMicros == 0 {
		return c, nil
	}
	var err error
	stat := filepath.Join(pc.cpuCtlDir, "cpu.stat")
	if c.periods, err = statField(stat, "nr_periods"); err != nil {
		return c, err
	}
	c.throttled, err = statField(stat, "nr_throttled")
	return c, err
}

// memory is the cgroup's usage and working set (usage − inactive_file, as
// the kubelet computes it, never below zero).
func (pc *podCgroup) memory() (usage, workingSet uint64, err error) {
	if pc.memoryDir == "" {
		return 0, 0, fmt.Errorf("no memory cgroup")
	}
	usageFile, inactive := "memory.usage_in_bytes", "total_inactive_file"
	if pc.v2 {
		usageFile, inactive = "memory.current", "inactive_file"
	}
	if usage, err = readUint(filepath.Join(pc.memoryDir, usageFile)); err != nil {
		return 0, 0, err
	}
	in, err := statField(filepath.Join(pc.memoryDir, "memory.stat"), inactive)
	if err != nil {
		return 0, 0, err
	}
	if in < usage {
		workingSet = usage - in
	}
	return usage, workingSet, nil
}

func readUint(path string) (uint64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
}

// statField reads "key value" from a flat-keyed file (cpu.stat, memory.stat).
func statField(path, key string) (uint64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == key {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no %s", path, key)
}
