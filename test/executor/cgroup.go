package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// cgroupManager gives each pod's process a CPU cgroup of its own with the
// container's CPU limit, so that the runner's load-generator CPU check
// measures the load generator and not the database servers beside it, and a
// memory cgroup with its memory limit, whose counters the test kubelet's
// /stats/summary reports (stats.go).
type cgroupManager struct {
	v2   bool
	base string // parent cgroup directory (v2) or "" for v1
	// memory: the memory controller could be enabled (v2) or its hierarchy
	// exists (v1); without it pods have CPU statistics only.
	memory bool
	err    error
}

const cgroupParent = "dbperf-executor"

func newCgroupManager() cgroupManager {
	if os.Geteuid() != 0 {
		return cgroupManager{err: fmt.Errorf("not root")}
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		base := filepath.Join("/sys/fs/cgroup", cgroupParent)
		if err := os.MkdirAll(base, 0o755); err != nil {
			return cgroupManager{err: err}
		}
		_ = os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+cpu"), 0o644)
		if err := os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+cpu"), 0o644); err != nil {
			return cgroupManager{err: fmt.Errorf("enable the cpu controller: %w", err)}
		}
		_ = os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+memory"), 0o644)
		memErr := os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+memory"), 0o644)
		return cgroupManager{v2: true, base: base, memory: memErr == nil}
	}
	for _, c := range []string{"cpu", "cpuacct"} {
		if err := os.MkdirAll(filepath.Join("/sys/fs/cgroup", c, cgroupParent), 0o755); err != nil {
			return cgroupManager{err: err}
		}
	}
	memErr := os.MkdirAll(filepath.Join("/sys/fs/cgroup", "memory", cgroupParent), 0o755)
	return cgroupManager{memory: memErr == nil}
}

// v1Controllers are the hierarchies a v1 pod cgroup has.
func (m cgroupManager) v1Controllers() []string {
	if m.memory {
		return []string{"cpu", "cpuacct", "memory"}
	}
	return []string{"cpu", "cpuacct"}
}

func (m cgroupManager) describe() string {
	switch {
	case m.err != nil:
		return "none (" + m.err.Error() + "): runners measure the whole machine"
	case m.v2:
		return "cgroup v2, one per pod under " + m.base
	default:
		return "cgroup v1 (" + strings.Join(m.v1Controllers(), ", ") + "), one per pod under " + cgroupParent
	}
}

type podCgroup struct {
	root  string   // what the runner gets as --cgroup-root
	dirs  []string // the cgroup directories
	procs []string // their cgroup.procs files
	v2    bool
	// cpuDir holds cpuacct.usage (v1) or cpu.stat (v2); cpuCtlDir the
	// cpu controller's quota and throttling (v1: the cpu hierarchy);
	// memoryDir the memory counters, "" without the memory controller.
	cpuDir, cpuCtlDir, memoryDir string
}

// create makes the pod's cgroup with a CPU limit of milliCPU and a memory
// limit of memBytes (0: none).
func (m cgroupManager) create(name string, milliCPU, memBytes int64) (*podCgroup, error) {
	if m.err != nil {
		return nil, m.err
	}
	pc := &podCgroup{v2: m.v2}
	quota := "max 100000"
	if milliCPU > 0 {
		quota = strconv.FormatInt(milliCPU*100, 10) + " 100000"
	}
	if m.v2 {
		dir := filepath.Join(m.base, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		pc.dirs = []string{dir}
		pc.procs = []string{filepath.Join(dir, "cgroup.procs")}
		pc.root, pc.cpuDir, pc.cpuCtlDir = dir, dir, dir
		if err := os.WriteFile(filepath.Join(dir, "cpu.max"), []byte(quota), 0o644); err != nil {
			pc.remove()
			return nil, err
		}
		if m.memory {
			pc.memoryDir = dir
			if memBytes > 0 {
				if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(memBytes, 10)), 0o644); err != nil {
					pc.remove()
					return nil, err
				}
			}
		}
		return pc, nil
	}
	// v1: a directory that looks like a container's /sys/fs/cgroup.
	root, err := os.MkdirTemp("", "dbperf-cgroot-")
	if err != nil {
		return nil, err
	}
	pc.root = root
	for _, c := range m.v1Controllers() {
		dir := filepath.Join("/sys/fs/cgroup", c, cgroupParent, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			pc.remove()
			return nil, err
		}
		switch c {
		case "cpu":
			pc.cpuCtlDir = dir
		case "cpuacct":
			pc.cpuDir = dir
		case "memory":
			pc.memoryDir = dir
		}
		pc.dirs = append(pc.dirs, dir)
		pc.procs = append(pc.procs, filepath.Join(dir, "cgroup.procs"))
		if err := os.Symlink(dir, filepath.Join(root, c)); err != nil {
			pc.remove()
			return nil, err
		}
	}
	if milliCPU > 0 {
		q := strings.Fields(quota)[0]
		if err := os.WriteFile(filepath.Join(pc.dirs[0], "cpu.cfs_quota_us"), []byte(q), 0o644); err != nil {
			pc.remove()
			return nil, err
		}
	}
	if pc.memoryDir != "" && memBytes > 0 {
		if err := os.WriteFile(filepath.Join(pc.memoryDir, "memory.limit_in_bytes"), []byte(strconv.FormatInt(memBytes, 10)), 0o644); err != nil {
			pc.remove()
			return nil, err
		}
	}
	return pc, nil
}

// joinCommand is a prefix that moves the process into the cgroup before it
// runs anything, so that every child is counted from the first instruction.
func (pc *podCgroup) joinCommand() []string {
	script := ""
	for i := range pc.procs {
		script += fmt.Sprintf(`echo $$ > "$%d" && `, i+1)
	}
	script += fmt.Sprintf(`shift %d && exec "$@"`, len(pc.procs))
	return append([]string{"/bin/sh", "-c", script, "sh"}, pc.procs...)
}

func (pc *podCgroup) remove() {
	for _, d := range pc.dirs {
		// Processes may take a moment to leave; the kernel refuses rmdir until then.
		_ = os.Remove(d)
	}
	if !strings.HasPrefix(pc.root, "/sys/") {
		_ = os.RemoveAll(pc.root)
	}
}

// killAll kills every process left in the pod's cgroups: a pod's end kills
// its process group, but the runner starts its tool in a group of its own,
// and a tool that ignores its runner's death (redis-benchmark retrying an
// unreachable server) would spin on after the pod, as a container's
// processes never outlive it.
func (pc *podCgroup) killAll() {
	for _, f := range pc.procs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(field); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}
