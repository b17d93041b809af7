package kubelet

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	stats "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func u(v uint64) *uint64 { return &v }

// podStat is one pod's entry of a summary: cumulative CPU in seconds,
// working set in MiB, network bytes (nil: no network statistics).
type podStat struct {
	ns, name, uid string
	cpuSeconds    float64
	wsMiB         uint64
	rx, tx        *uint64
	containers    bool // CPU and memory per container only, split in two
}

func (p podStat) stats(at time.Time) stats.PodStats {
	ps := stats.PodStats{PodRef: stats.PodReference{Namespace: p.ns, Name: p.name, UID: p.uid}}
	ts := metav1.NewTime(at)
	ns := uint64(p.cpuSeconds * 1e9)
	ws := p.wsMiB << 20
	if p.containers {
		for _, part := range []uint64{ns / 4, ns - ns/4} {
			ps.Containers = append(ps.Containers, stats.ContainerStats{
				CPU:    &stats.CPUStats{Time: ts, UsageCoreNanoSeconds: u(part)},
				Memory: &stats.MemoryStats{Time: ts, WorkingSetBytes: u(ws / 2)},
			})
		}
	} else {
		ps.CPU = &stats.CPUStats{Time: ts, UsageCoreNanoSeconds: u(ns)}
		ps.Memory = &stats.MemoryStats{Time: ts, WorkingSetBytes: u(ws)}
	}
	if p.rx != nil {
		ps.Network = &stats.NetworkStats{Time: ts, Interfaces: []stats.InterfaceStats{
			{Name: "eth0", RxBytes: p.rx, TxBytes: p.tx}}}
	}
	return ps
}

// summary of a node at t0+sec: the node's CPU seconds and working set, one
// interface's bytes, and its pods.
func summary(node string, sec, nodeCPUSeconds float64, nodeWSMiB, ethRx uint64, pods ...podStat) *stats.Summary {
	at := t0.Add(time.Duration(sec * float64(time.Second)))
	ts := metav1.NewTime(at)
	s := &stats.Summary{Node: stats.NodeStats{NodeName: node,
		CPU:     &stats.CPUStats{Time: ts, UsageCoreNanoSeconds: u(uint64(nodeCPUSeconds * 1e9))},
		Memory:  &stats.MemoryStats{Time: ts, WorkingSetBytes: u(nodeWSMiB << 20)},
		Network: &stats.NetworkStats{Time: ts, Interfaces: []stats.InterfaceStats{{Name: "eth0", RxBytes: u(ethRx), TxBytes: u(ethRx / 2)}}},
	}}
	for _, p := range pods {
		s.Pods = append(s.Pods, p.stats(at))
	}
	return s
}

func poll(round int, node string, s *stats.Summary) Poll {
	return Poll{Round: round, Node: node, At: t0.Add(time.Duration(round) * 10 * time.Second), Summary: s}
}

const mib = 1 << 20

func fig(name, subject string, v float64, unit string) telemetry.Figure {
	return telemetry.Figure{Name: name, Subject: subject, Value: v, Unit: unit, Direction: results.Neutral}
}

func TestSummarize(t *testing.T) {
	db0 := Pod{Namespace: "ns", Name: "db-0", Role: telemetry.RoleTarget, Node: "n1", CPULimitCores: 2, NodeAllocatableCores: 3.5}
	db1 := Pod{Namespace: "ns", Name: "db-1", Role: telemetry.RoleTarget, Node: "n2", CPULimitCores: 2}
	lg := Pod{Namespace: "ns", Name: "lg", Role: telemetry.RoleLoadgen, Node: "n2"}
	pod := func(p Pod, uid string, cpu float64, ws uint64) podStat {
		return podStat{ns: p.Namespace, name: p.Name, uid: uid, cpuSeconds: cpu, wsMiB: ws}
	}
	tests := map[string]struct {
		subjects Subjects
		polls    []Poll
		want     []telemetry.Figure // compared by subject and name; figures not listed are not checked
		absent   []string           // "name[subject]" that must not be there
		warnings []string           // substrings, one per expected warning, in order
		series   map[string][]float64
	}{
		"two target pods, a load generator, two nodes": {
			subjects: Subjects{Pods: []Pod{db0, db1, lg}, Nodes: []Node{{Name: "n1", CPUCores: 4}, {Name: "n2", CPUCores: 8}}},
			polls: []Poll{
				// db-0: 1 core then 3 cores; db-1: 1 core twice; lg 0.5 core.
				poll(0, "n1", summary("n1", 0, 100, 1000, 0, pod(db0, "a", 10, 100))),
				poll(0, "n2", summary("n2", 0, 200, 2000, 0, pod(db1, "b", 20, 300), pod(lg, "c", 1, 50))),
				poll(1, "n1", summary("n1", 10, 120, 1200, 1000, pod(db0, "a", 20, 150))),
				poll(1, "n2", summary("n2", 10, 240, 2000, 5000, pod(db1, "b", 30, 200), pod(lg, "c", 6, 60))),
				poll(2, "n1", summary("n1", 20, 160, 1100, 3000, pod(db0, "a", 50, 120))),
				poll(2, "n2", summary("n2", 20, 260, 2400, 5000, pod(db1, "b", 40, 250), pod(lg, "c", 11, 55))),
			},
			want: []telemetry.Figure{
				fig("cpuCores", "target/db-0", 2, "cores"),
				fig("cpuCoresP95", "target/db-0", 3, "cores"),
				fig("cpuLimitPercent", "target/db-0", 100, "%"),
				// 2 cores of the node's 3.5 allocatable.
				fig("cpuNodeAllocatablePercent", "target/db-0", 100*2/3.5, "%"),
				fig("memoryWorkingSetBytesMax", "target/db-0", 150*mib, "bytes"),
				fig("cpuCores", "target/db-1", 1, "cores"),
				fig("cpuLimitPercent", "target/db-1", 50, "%"),
				fig("cpuCores", "loadgen/lg", 0.5, "cores"),
				fig("memoryWorkingSetBytesMax", "loadgen/lg", 60*mib, "bytes"),
				// The target's sum: means add up, P95 of the summed rounds (2 and 4).
				fig("cpuCores", "target", 3, "cores"),
				fig("cpuCoresP95", "target", 4, "cores"),
				fig("cpuLimitPercent", "target", 75, "%"),
				fig("memoryWorkingSetBytesMax", "target", 450*mib, "bytes"),
				// n1: 2 then 4 cores of 4; n2: 4 then 2 of 8.
				fig("cpuBusyPercent", "node/n1", 75, "%"),
				fig("cpuBusyPercentP95", "node/n1", 100, "%"),
				fig("cpuBusyPercent", "node/n2", 37.5, "%"),
				fig("memoryUsedBytesMax", "node/n1", 1200*mib, "bytes"),
				fig("memoryUsedBytes", "node/n1", 1100*mib, "bytes"),
				fig("networkReceiveBytesPerSecond.eth0", "node/n1", 150, "bytes/s"),
				fig("networkTransmitBytesPerSecond.eth0", "node/n2", 125, "bytes/s"),
			},
			absent: []string{"cpuLimitPercent[loadgen/lg]", "networkReceiveBytesPerSecond[target/db-0]", "cpuNodeAllocatablePercent[loadgen/lg]"},
			series: map[string][]float64{
				"cpuCores[target/db-0]":             {1, 3},
				"cpuCores[target]":                  {2, 4},
				"memoryWorkingSetBytes[target]":     {400 * mib, 350 * mib, 370 * mib},
				"cpuBusyPercent[node/n2]":           {50, 25},
				"memoryWorkingSetBytes[loadgen/lg]": {50 * mib, 60 * mib, 55 * mib},
				"memoryUsedBytes[node/n2]":          {2000 * mib, 2000 * mib, 2400 * mib},
			},
		},
		"a container restarted: the interval is left out, never negative": {
			subjects: Subjects{Pods: []Pod{db0}, Nodes: []Node{{Name: "n1", CPUCores: 4}}},
			polls: []Poll{
				poll(0, "n1", summary("n1", 0, 0, 1, 0, podStat{ns: "ns", name: "db-0", uid: "a", cpuSeconds: 100, containers: true})),
				poll(1, "n1", summary("n1", 10, 10, 1, 0, podStat{ns: "ns", name: "db-0", uid: "a", cpuSeconds: 110, containers: true})),
				poll(2, "n1", summary("n1", 20, 20, 1, 0, podStat{ns: "ns", name: "db-0", uid: "a", cpuSeconds: 3, containers: true})),
				poll(3, "n1", summary("n1", 30, 30, 1, 0, podStat{ns: "ns", name: "db-0", uid: "a", cpuSeconds: 23, containers: true})),
			},
			want: []telemetry.Figure{
				fig("cpuCores", "target/db-0", 1.5, "cores"),
				fig("cpuCoresP95", "target/db-0", 2, "cores"),
			},
			warnings: []string{"cpuCores of target/db-0 went down between 2025-03-01T12:00:10Z and 2025-03-01T12:00:20Z"},
			series:   map[string][]float64{"cpuCores[target/db-0]": {1, 2}},
		},
		"the pod was recreated under the same name": {
			subjects: Subjects{Pods: []Pod{db0}},
			polls: []Poll{
				poll(0, "n1", summary("n1", 0, 0, 1, 0, pod(db0, "a", 10, 1))),
				poll(1, "n1", summary("n1", 10, 10, 1, 0, pod(db0, "b", 50, 1))),
				poll(2, "n1", summary("n1", 20, 20, 1, 0, pod(db0, "b", 60, 1))),
			},
			want:     []telemetry.Figure{fig("cpuCores", "target/db-0", 1, "cores")},
			warnings: []string{"cpuCores of target/db-0 went down", "node n1: CPU capacity unknown"},
		},
		"a node that cannot be read is a warning naming it": {
			subjects: Subjects{Pods: []Pod{db0, lg}},
			polls: []Poll{
				poll(0, "n1", summary("n1", 0, 0, 1, 0, pod(db0, "a", 10, 1))),
				{Round: 0, Node: "n2", At: t0, Err: errors.New("nodes \"n2\" is forbidden")},
				poll(1, "n1", summary("n1", 10, 10, 1, 0, pod(db0, "a", 15, 1))),
				{Round: 1, Node: "n2", At: t0.Add(10 * time.Second), Err: errors.New("timeout")},
			},
			want:   []telemetry.Figure{fig("cpuCores", "target/db-0", 0.5, "cores")},
			absent: []string{"cpuCores[loadgen/lg]"},
			warnings: []string{"node n1: CPU capacity unknown",
				`node n2: 2 of 2 reads of its kubelet's statistics failed (first: nodes "n2" is forbidden)`},
		},
		"a reading the kubelet had not renewed makes no interval": {
			subjects: Subjects{Pods: []Pod{lg}, Nodes: []Node{{Name: "n2", CPUCores: 1}}},
			polls: []Poll{
				poll(0, "n2", summary("n2", 0, 0, 1, 0, pod(lg, "c", 0, 1))),
				poll(1, "n2", summary("n2", 0, 0, 1, 0, pod(lg, "c", 0, 1))),
				poll(2, "n2", summary("n2", 15, 3, 1, 0, pod(lg, "c", 3, 1))),
			},
			want:   []telemetry.Figure{fig("cpuCores", "loadgen/lg", 0.2, "cores"), fig("cpuBusyPercent", "node/n2", 20, "%")},
			series: map[string][]float64{"cpuCores[loadgen/lg]": {0.2}},
		},
		"pod network, when the pod has its own": {
			subjects: Subjects{Pods: []Pod{db0}},
			polls: []Poll{
				poll(0, "n1", summary("n1", 0, 0, 1, 0, podStat{ns: "ns", name: "db-0", uid: "a", rx: u(0), tx: u(100)})),
				poll(1, "n1", summary("n1", 10, 0, 1, 0, podStat{ns: "ns", name: "db-0", uid: "a", rx: u(5000), tx: u(1100)})),
			},
			want: []telemetry.Figure{
				fig("networkReceiveBytesPerSecond", "target/db-0", 500, "bytes/s"),
				fig("networkTransmitBytesPerSecond", "target/db-0", 100, "bytes/s"),
				fig("networkReceiveBytesPerSecond", "target", 500, "bytes/s"),
			},
			warnings: []string{"node n1: CPU capacity unknown"},
		},
		"a pod missing from its node's summary": {
			subjects: Subjects{Pods: []Pod{db0}},
			polls: []Poll{
				poll(0, "n1", summary("n1", 0, 0, 1, 0, pod(db0, "a", 10, 1))),
				poll(1, "n1", summary("n1", 10, 0, 1, 0)),
			},
			absent: []string{"cpuCores[target/db-0]"},
			warnings: []string{"pod ns/db-0 (target/db-0) was missing from 1 of 2 summaries of node n1",
				"no cpuCores for target/db-0: fewer than two readings", "node n1: CPU capacity unknown"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rep := Summarize(tc.subjects, tc.polls)
			got := map[string]telemetry.Figure{}
			for _, f := range rep.Figures {
				key := f.Name + "[" + f.Subject + "]"
				if _, dup := got[key]; dup {
					t.Errorf("figure %s twice", key)
				}
				got[key] = f
			}
			for _, w := range tc.want {
				key := w.Name + "[" + w.Subject + "]"
				if diff := cmp.Diff(w, got[key], cmpopts.EquateApprox(1e-9, 0)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", key, diff)
				}
			}
			for _, key := range tc.absent {
				if f, ok := got[key]; ok {
					t.Errorf("%s = %v, want no such figure", key, f.Value)
				}
			}
			checkWarnings(t, rep.Warnings, tc.warnings)
			series := map[string][]float64{}
			for _, s := range rep.Series {
				series[s.Name+"["+s.Subject+"]"] = telemetry.SampleValues(s.Samples)
			}
			for key, want := range tc.series {
				if diff := cmp.Diff(want, series[key], cmpopts.EquateApprox(1e-9, 0)); diff != "" {
					t.Errorf("series %s (-want +got):\n%s", key, diff)
				}
			}
			for _, f := range rep.Figures {
				if f.Value < 0 {
					t.Errorf("negative figure %s[%s] = %v", f.Name, f.Subject, f.Value)
				}
			}
		})
	}
}

func checkWarnings(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("warnings %q, want %d like %q", got, len(want), want)
		return
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("warning %d = %q, want it to contain %q", i, got[i], want[i])
		}
	}
}
