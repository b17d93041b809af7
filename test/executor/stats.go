package executor

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	stats "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// userHZ is the unit of /proc/stat's CPU times (USER_HZ, 100 on Linux).
const userHZ = 100

// serveSummary is the kubelet's Summary API (/stats/summary), computed from
// real counters: each pod from its own cgroup (CPU: cpuacct.usage on v1,
// cpu.stat usage_usec on v2; memory: usage − inactive_file, the kubelet's
// working set), the node from /proc/stat, /proc/meminfo and /proc/net/dev.
//
// Every simulated node is this one machine: whichever node is asked for,
// the node's figures are the machine's, and every pod the executor runs
// here is listed (the API server's node proxy does not tell which node was
// asked for). A sampler takes a pod's statistics from its own node's
// summary only. The pods share the host's network, so pods carry no
// network statistics; the node's interfaces do (loopback left out, as
// cAdvisor leaves it out).
func (e *Executor) serveSummary(w http.ResponseWriter, _ *http.Request) {
	s, err := e.summary()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s)
}

func (e *Executor) summary() (*stats.Summary, error) {
	node, err := nodeStats()
	if err != nil {
		return nil, err
	}
	s := &stats.Summary{Node: *node, Pods: []stats.PodStats{}}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.pods {
		if r.cgroup != nil {
			s.Pods = append(s.Pods, podStats(r.ref, r.started, r.container, r.cgroup))
		}
	}
	for _, a := range e.adopted {
		s.Pods = append(s.Pods, podStats(a.ref, a.started, a.container, a.cgroup))
	}
	return s, nil
}

// podStats of a pod whose one container's cgroup is the pod's.
func podStats(ref stats.PodReference, started time.Time, container string, cg *podCgroup) stats.PodStats {
	ps := stats.PodStats{PodRef: ref, StartTime: metav1.NewTime(started)}
	now := metav1.Now()
	if ns, err := cg.cpuNanos(); err == nil {
		ps.CPU = &stats.CPUStats{Time: now, UsageCoreNanoSeconds: &ns}
	}
	if usage, ws, err := cg.memory(); err == nil {
		ps.Memory = &stats.MemoryStats{Time: now, UsageBytes: &usage, WorkingSetBytes: &ws}
	}
	ps.Containers = []stats.ContainerStats{{Name: container, StartTime: ps.StartTime, CPU: ps.CPU, Memory: ps.Memory}}
	return ps
}

// nodeStats reads the machine: CPU busy time (user, nice, system, irq,
// softirq, steal: what the root cgroup's cpuacct counts; idle and iowait
// are not), memory (total − free, and less inactive file pages for the
// working set, as the kubelet's root cgroup figures) and network.
func nodeStats() (*stats.NodeStats, error) {
	now := metav1.Now()
	busy, err := procStatBusy()
	if err != nil {
		return nil, err
	}
	mem, err := meminfo()
	if err != nil {
		return nil, err
	}
	usage := (mem["MemTotal"] - mem["MemFree"]) * 1024
	ws := usage - min(usage, mem["Inactive(file)"]*1024)
	avail := mem["MemAvailable"] * 1024
	n := &stats.NodeStats{StartTime: metav1.NewTime(bootTime()),
		CPU:    &stats.CPUStats{Time: now, UsageCoreNanoSeconds: &busy},
		Memory: &stats.MemoryStats{Time: now, UsageBytes: &usage, WorkingSetBytes: &ws, AvailableBytes: &avail},
	}
	if ifs, err := netDev(); err == nil && len(ifs) > 0 {
		n.Network = &stats.NetworkStats{Time: now, InterfaceStats: ifs[0], Interfaces: ifs}
	}
	return n, nil
}

func procStatBusy() (uint64, error) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var jiffies uint64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system irq softirq steal
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		jiffies += v
	}
	return jiffies * (1e9 / userHZ), nil
}

// meminfo in kB.
func meminfo() (map[string]uint64, error) {
	raw, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.Fields(v)[0], 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

// netDev reads /proc/net/dev, loopback left out.
func netDev() ([]stats.InterfaceStats, error) {
	raw, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		return nil, err
	}
	var out []stats.InterfaceStats
	for _, line := range strings.Split(string(raw), "\n")[2:] {
		name, rest, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		f := strings.Fields(rest)
		if !ok || name == "lo" || len(f) < 11 {
			continue
		}
		rx, _ := strconv.ParseUint(f[0], 10, 64)
		rxErr, _ := strconv.ParseUint(f[2], 10, 64)
		tx, _ := strconv.ParseUint(f[8], 10, 64)
		txErr, _ := strconv.ParseUint(f[10], 10, 64)
		out = append(out, stats.InterfaceStats{Name: name, RxBytes: &rx, RxErrors: &rxErr, TxBytes: &tx, TxErrors: &txErr})
	}
	return out, nil
}

func bootTime() time.Time {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(s, 0)
			}
		}
	}
	return time.Time{}
}
