package prometheus

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// burnerPod is a real busy process in a cgroup v1 of its own (cpu,
// cpuacct, memory) with a CPU quota, whose counters a test handler serves
// in cAdvisor's format: what the kubelet's /metrics/cadvisor says of a
// pod's container. Without root or cgroup v1 it reads the process from
// /proc instead (no throttling then).
type burnerPod struct {
	cmd  *exec.Cmd
	dirs map[string]string // controller → cgroup directory; nil: /proc only
}

const (
	testNamespace = "bench"
	testPod       = "target-0"
	clockTicks    = 100 // USER_HZ of cpuacct.stat and /proc/<pid>/stat
)

// startBurner starts `sh -c 'while :; do :; done'` limited to milliCPU,
// in its cgroup from its first instruction (memory v1 charges a page to
// the cgroup that faulted it in, not to one joined later).
func startBurner(t *testing.T, milliCPU int) *burnerPod {
	t.Helper()
	b := &burnerPod{}
	t.Cleanup(b.remove)
	loop := []string{"-c", "while :; do :; done"}
	procs, err := b.makeCgroup(strings.ReplaceAll(t.Name(), "/", "_"), milliCPU)
	if err != nil {
		t.Logf("the burner's counters come from /proc/<pid> (no cgroup v1: %v)", err)
		b.dirs = nil
	} else {
		join := `for f; do echo $$ > "$f" || exit 1; done; exec sh -c 'while :; do :; done'`
		loop = append([]string{"-c", join, "sh"}, procs...)
	}
	b.cmd = exec.Command("sh", loop...)
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *burnerPod) remove() {
	if b.cmd != nil && b.cmd.Process != nil {
		_ = b.cmd.Process.Kill()
		_ = b.cmd.Wait()
	}
	for _, d := range b.dirs {
		_ = os.Remove(d)
		_ = os.Remove(filepath.Dir(d)) // unless another test's is left
	}
}

// makeCgroup makes the pod's cgroups with a CPU quota; it returns their
// cgroup.procs files.
func (b *burnerPod) makeCgroup(name string, milliCPU int) ([]string, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("not root")
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpuacct/cpuacct.usage"); err != nil {
		return nil, err
	}
	b.dirs = map[string]string{}
	var procs []string
	for _, c := range []string{"cpu", "cpuacct", "memory"} {
		dir := filepath.Join("/sys/fs/cgroup", c, "dbperf-telemetry-test", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		b.dirs[c] = dir
		procs = append(procs, filepath.Join(dir, "cgroup.procs"))
	}
	quota := strconv.Itoa(milliCPU * 100) // of the default 100 ms period
	return procs, os.WriteFile(filepath.Join(b.dirs["cpu"], "cpu.cfs_quota_us"), []byte(quota), 0o644)
}

// procCPUSeconds is the burner's CPU time from /proc/<pid>/stat: the
// reference the test holds Prometheus' figures against.
func (b *burnerPod) procCPUSeconds(t *testing.T) float64 {
	t.Helper()
	return testutil.MustProcessCPUSeconds(t, b.cmd.Process.Pid)
}

// counters are a container's cAdvisor counters read now.
type counters struct {
	usage, user, system          float64 // seconds
	periods, throttled           float64
	workingSet                   float64 // bytes
	hasThrottling, hasWorkingSet bool
}

func (b *burnerPod) read() (counters, error) {
	if b.dirs == nil {
		return b.readProc()
	}
	var c counters
	ns, err := readNumber(filepath.Join(b.dirs["cpuacct"], "cpuacct.usage"))
	if err != nil {
		return c, err
	}
	c.usage = ns / 1e9
	stat, err := readKeyed(filepath.Join(b.dirs["cpuacct"], "cpuacct.stat"))
	if err != nil {
		return c, err
	}
	c.user, c.system = stat["user"]/clockTicks, stat["system"]/clockTicks
	cpu, err := readKeyed(filepath.Join(b.dirs["cpu"], "cpu.stat"))
	if err != nil {
		return c, err
	}
	c.periods, c.throttled, c.hasThrottling = cpu["nr_periods"], cpu["nr_throttled"], true
	usage, err := readNumber(filepath.Join(b.dirs["memory"], "memory.usage_in_bytes"))
	if err != nil {
		return c, err
	}
	mem, err := readKeyed(filepath.Join(b.dirs["memory"], "memory.stat"))
	if err != nil {
		return c, err
	}
	// cAdvisor's working set: usage less the inactive file cache.
	c.workingSet, c.hasWorkingSet = max(usage-mem["total_inactive_file"], 0), true
	return c, nil
}

func (b *burnerPod) mustRead(t *testing.T) counters {
	t.Helper()
	c, err := b.read()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (b *burnerPod) readProc() (counters, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", b.cmd.Process.Pid))
	if err != nil {
		return counters{}, err
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return counters{usage: (utime + stime) / clockTicks, user: utime / clockTicks, system: stime / clockTicks}, nil
}

// ServeHTTP writes the counters as the kubelet's cAdvisor endpoint does:
// the container's series, the pod cgroup's (container="", the same CPU)
// and the pause container's, so that a selector that does not pick
// containers counts the CPU twice.
func (b *burnerPod) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	c, err := b.read()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var out strings.Builder
	series := func(metric, kind string, value func(counters) float64, ok bool) {
		if !ok {
			return
		}
		fmt.Fprintf(&out, "# TYPE %s %s\n", metric, kind)
		for _, ctr := range []struct {
			name string
			c    counters
		}{{"burner", c}, {"", c}, {"POD", counters{}}} {
			fmt.Fprintf(&out, "%s{container=%q,id=\"/kubepods/pod-test/%s\",image=\"busybox\",namespace=%q,pod=%q} %g\n",
				metric, ctr.name, ctr.name, testNamespace, testPod, value(ctr.c))
		}
	}
	series("container_cpu_usage_seconds_total", "counter", func(c counters) float64 { return c.usage }, true)
	series("container_cpu_user_seconds_total", "counter", func(c counters) float64 { return c.user }, true)
	series("container_cpu_system_seconds_total", "counter", func(c counters) float64 { return c.system }, true)
	series("container_cpu_cfs_periods_total", "counter", func(c counters) float64 { return c.periods }, c.hasThrottling)
	series("container_cpu_cfs_throttled_periods_total", "counter", func(c counters) float64 { return c.throttled }, c.hasThrottling)
	series("container_memory_working_set_bytes", "gauge", func(c counters) float64 { return c.workingSet }, c.hasWorkingSet)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte(out.String()))
}

func readNumber(path string) (float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
}

// readKeyed reads "key value" lines (cpu.stat, memory.stat, cpuacct.stat).
func readKeyed(path string) (map[string]float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok {
			out[k], _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return out, nil
}
