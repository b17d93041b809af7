package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// BinDirForTest returns the control-plane binaries from KUBEBUILDER_ASSETS,
// skipping the test when they are not built.
func binDirForTest(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set (hack/test.sh sets it)")
	}
	if _, err := os.Stat(filepath.Join(dir, "kwokctl")); err != nil {
		t.Skipf("no kwokctl in %s", dir)
	}
	return dir
}

func TestClusterSchedulesOntoPoolsAndLeavesWorkloadPodsToTheExecutor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Name: "sim-test", BinDir: binDirForTest(t), Dir: t.TempDir(), Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if err := c.CreateNodes(ctx, DefaultPools()); err != nil {
		t.Fatal(err)
	}
	node, err := c.Clientset.CoreV1().Nodes().Get(ctx, NodeName("standard-v4a", 1), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node.Labels["node.kubernetes.io/instance-type"] != "standard-v4a-8" || node.Status.NodeInfo.KernelVersion == "" ||
		node.Status.DaemonEndpoints.KubeletEndpoint.Port != int32(c.KubeletPort) {
		t.Errorf("node %s: labels %v, nodeInfo %+v, kubelet port %d (want %d)", node.Name, node.Labels, node.Status.NodeInfo,
			node.Status.DaemonEndpoints.KubeletEndpoint.Port, c.KubeletPort)
	}

	pod := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{PoolLabel: "standard-v3"},
				Containers:   []corev1.Container{{Name: "c", Image: "example"}},
			},
		}
	}
	for _, p := range []*corev1.Pod{pod("plain", nil), pod("workload", map[string]string{"bench.dbperf.io/role": "loadgen"})} {
		if _, err := c.Clientset.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	err = testutil.Poll(ctx, time.Minute, 200*time.Millisecond, "pod plain Running", func() error {
		p, err := c.Clientset.CoreV1().Pods("default").Get(ctx, "plain", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning || !strings.HasPrefix(p.Spec.NodeName, "standard-v3-") {
			return fmt.Errorf("phase %s on node %q", p.Status.Phase, p.Spec.NodeName)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The workload pod is scheduled onto the pool but kwok leaves it Pending.
	err = testutil.Poll(ctx, time.Minute, 200*time.Millisecond, "pod workload scheduled", func() error {
		p, err := c.Clientset.CoreV1().Pods("default").Get(ctx, "workload", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !strings.HasPrefix(p.Spec.NodeName, "standard-v3-") {
			return fmt.Errorf("phase %s on node %q", p.Status.Phase, p.Spec.NodeName)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A positive sign that kwok has seen the workload pod scheduled: a pod
	// created after that (kwok's informer delivers pod events in order)
	// is running.
	if _, err := c.Clientset.CoreV1().Pods("default").Create(ctx, pod("later", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = testutil.Poll(ctx, time.Minute, 200*time.Millisecond, "pod later Running", func() error {
		p, err := c.Clientset.CoreV1().Pods("default").Get(ctx, "later", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s on node %q", p.Status.Phase, p.Spec.NodeName)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Clientset.CoreV1().Pods("default").Get(ctx, "workload", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != corev1.PodPending || p.Status.PodIP != "" {
		t.Errorf("kwok touched the workload pod: phase %s, podIP %q", p.Status.Phase, p.Status.PodIP)
	}
	assertLoopbackOnly(t, c)
}

// assertLoopbackOnly checks that no component of the cluster listens on a
// non-loopback address, from /proc/net/tcp.
func assertLoopbackOnly(t *testing.T, c *Cluster) {
	t.Helper()
	pidsDir := filepath.Join(c.Dir, "clusters", c.Name, "pids")
	entries, err := os.ReadDir(pidsDir)
	if err != nil {
		t.Fatalf("kwokctl pids: %v", err)
	}
	inodes := map[string]string{}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(pidsDir, e.Name()))
		if err != nil {
			continue
		}
		pid := strings.TrimSpace(string(raw))
		fds, _ := os.ReadDir(filepath.Join("/proc", pid, "fd"))
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", pid, "fd", fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = e.Name()
			}
		}
	}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		raw, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // 0A: LISTEN
				continue
			}
			who, ours := inodes[f[9]]
			if !ours {
				continue
			}
			addr, _, _ := strings.Cut(f[1], ":")
			if addr != "0100007F" && addr != "00000000000000000000000001000000" {
				t.Errorf("%s listens on %s (%s), not on 127.0.0.1", who, f[1], table)
			}
		}
	}
	if len(inodes) == 0 {
		t.Error("found no sockets of the cluster's processes: the check checked nothing")
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
