package kubelet

import (
	"time"

	stats "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// Pod is a pod whose statistics the sampler keeps.
type Pod struct {
	Namespace, Name string
	// Role is telemetry.RoleTarget or telemetry.RoleLoadgen.
	Role telemetry.Role
	// Node the pod runs on: its statistics are read from that node's
	// kubelet only.
	Node string
	// CPULimitCores is the pod's CPU limit (the sum of its containers');
	// 0 when it has none, and then there is no cpuLimitPercent.
	CPULimitCores float64
	// NodeAllocatableCores is the allocatable CPU of the pod's node; 0
	// when unknown, and then there is no cpuNodeAllocatablePercent.
	NodeAllocatableCores float64
}

// Subject of the pod's figures: target/<pod>, loadgen/<pod>.
func (p Pod) Subject() telemetry.Subject { return telemetry.Subject{Role: p.Role, Name: p.Name} }

// Node is a node whose statistics the sampler keeps.
type Node struct {
	Name string
	// CPUCores is the node's capacity (NodeCPUCores reads it); 0 when
	// unknown, and then there is no cpuBusyPercent.
	CPUCores float64
}

// Subjects are what a sampler watches. The pods' nodes are watched even
// when Nodes does not list them.
type Subjects struct {
	Pods  []Pod
	Nodes []Node
	// Run is what the run asks of a source beyond its pods and nodes (its
	// own queries, its hosts by Prometheus selector): the kubelet source
	// has nothing to answer it with.
	Run telemetry.RunQueries
}

// nodes lists every node to poll: Nodes, then the pods' other nodes.
func (s Subjects) nodes() []Node {
	seen := map[string]bool{}
	var out []Node
	for _, n := range s.Nodes {
		if !seen[n.Name] {
			seen[n.Name] = true
			out = append(out, n)
		}
	}
	for _, p := range s.Pods {
		if p.Node != "" && !seen[p.Node] {
			seen[p.Node] = true
			out = append(out, Node{Name: p.Node})
		}
	}
	return out
}

// Poll is one read of one node's summary in one round of polls.
type Poll struct {
	// Round numbers the rounds of polls from 0: the polls of every node in
	// one round are summed together for the target.
	Round   int
	Node    string
	At      time.Time // when the read was made
	Summary *stats.Summary
	Err     error
}

// reading is one value of one quantity of one subject.
type reading struct {
	round int
	at    time.Time // the kubelet's own instant of the statistics
	v     float64
	// epoch changes when the counter starts again for a known reason (the
	// pod was recreated under the same name: another UID).
	epoch string
}

// podReadings are a pod's quantities over the polls of its node.
type podReadings struct {
	cpu, workingSet, rx, tx []reading
	missing                 int // polls of its node whose summary lacked it
}

// nodeReadings are a node's quantities; rx and tx per interface.
type nodeReadings struct {
	cpu, workingSet []reading
	rx, tx          map[string][]reading
	failed          int
	firstErr        error
}

// at is the kubelet's time of a statistic, or the poll's when it has none.
func at(t time.Time, poll time.Time) time.Time {
	if t.IsZero() {
		return poll
	}
	return t
}

func add(rs []reading, round int, t time.Time, v *uint64, epoch string) []reading {
	if v == nil {
		return rs
	}
	return append(rs, reading{round: round, at: t, v: float64(*v), epoch: epoch})
}

// podStats records one pod's entry of a summary. The pod's own cgroup
// (PodStats.CPU, .Memory) is used when the kubelet gives it, else the sum
// of its containers.
func (r *podReadings) record(p Poll, ps *stats.PodStats) {
	uid := ps.PodRef.UID
	cpuT, cpu := podCPU(ps)
	r.cpu = add(r.cpu, p.Round, at(cpuT, p.At), cpu, uid)
	memT, ws := podWorkingSet(ps)
	r.workingSet = add(r.workingSet, p.Round, at(memT, p.At), ws, uid)
	if n := ps.Network; n != nil {
		rx, tx := interfaceSums(n)
		r.rx = add(r.rx, p.Round, at(n.Time.Time, p.At), rx, uid)
		r.tx = add(r.tx, p.Round, at(n.Time.Time, p.At), tx, uid)
	}
}

func podCPU(ps *stats.PodStats) (time.Time, *uint64) {
	return podOrContainers(ps, func(c *stats.CPUStats, _ *stats.MemoryStats) (time.Time, *uint64) {
		if c == nil {
			return time.Time{}, nil
		}
		return c.Time.Time, c.UsageCoreNanoSeconds
	})
}

func podWorkingSet(ps *stats.PodStats) (time.Time, *uint64) {
	return podOrContainers(ps, func(_ *stats.CPUStats, m *stats.MemoryStats) (time.Time, *uint64) {
		if m == nil {
			return time.Time{}, nil
		}
		return m.Time.Time, m.WorkingSetBytes
	})
}

// podOrContainers reads a statistic of the pod as a whole, else sums it
// over its containers (at the last container's instant); nil when neither
// has it.
func podOrContainers(ps *stats.PodStats, read func(*stats.CPUStats, *stats.MemoryStats) (time.Time, *uint64)) (time.Time, *uint64) {
	if t, v := read(ps.CPU, ps.Memory); v != nil {
		return t, v
	}
	var sum uint64
	var t time.Time
	found := false
	for _, c := range ps.Containers {
		if ct, v := read(c.CPU, c.Memory); v != nil {
			sum += *v
			t, found = ct, true
		}
	}
	if !found {
		return t, nil
	}
	return t, &sum
}

// interfaceSums adds the received and transmitted bytes of every interface
// (the default one alone when the list is empty), as cAdvisor's
// container_network_* summed per pod do.
func interfaceSums(n *stats.NetworkStats) (rx, tx *uint64) {
	ifs := n.Interfaces
	if len(ifs) == 0 {
		ifs = []stats.InterfaceStats{n.InterfaceStats}
	}
	var r, t uint64
	var haveR, haveT bool
	for _, i := range ifs {
		if i.RxBytes != nil {
			r, haveR = r+*i.RxBytes, true
		}
		if i.TxBytes != nil {
			t, haveT = t+*i.TxBytes, true
		}
	}
	if haveR {
		rx = &r
	}
	if haveT {
		tx = &t
	}
	return rx, tx
}

// record keeps a node's own statistics from one poll.
func (r *nodeReadings) record(p Poll) {
	if p.Err != nil || p.Summary == nil {
		r.failed++
		if r.firstErr == nil {
			r.firstErr = p.Err
		}
		return
	}
	n := p.Summary.Node
	if n.CPU != nil {
		r.cpu = add(r.cpu, p.Round, at(n.CPU.Time.Time, p.At), n.CPU.UsageCoreNanoSeconds, "")
	}
	if n.Memory != nil {
		r.workingSet = add(r.workingSet, p.Round, at(n.Memory.Time.Time, p.At), n.Memory.WorkingSetBytes, "")
	}
	if n.Network != nil {
		if r.rx == nil {
			r.rx, r.tx = map[string][]reading{}, map[string][]reading{}
		}
		for _, i := range n.Network.Interfaces {
			t := at(n.Network.Time.Time, p.At)
			r.rx[i.Name] = add(r.rx[i.Name], p.Round, t, i.RxBytes, "")
			r.tx[i.Name] = add(r.tx[i.Name], p.Round, t, i.TxBytes, "")
		}
	}
}

// TelemetrySubjects are the pods and nodes as a telemetry.Source names
// them, for a source that reads the same window another way (Prometheus).
func (s Subjects) TelemetrySubjects() []telemetry.Subject {
	var out []telemetry.Subject
	for _, p := range s.Pods {
		out = append(out, p.Subject())
	}
	for _, n := range s.nodes() {
		out = append(out, telemetry.Subject{Role: telemetry.RoleNode, Name: n.Name})
	}
	return out
}
