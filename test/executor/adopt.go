package executor

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	stats "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// A target's database pod is simulated by kwok (it has no process), and a
// local server stands for it behind the Service's BackendAnnotation. The
// executor adopts that server: it moves the process listening on the
// backend's port, with its children, into a cgroup of the pod, so that the
// pod's /stats/summary CPU and memory are the real server's. Children forked
// later (a PostgreSQL backend per connection) are born in it. No limit is
// set: the server may stand for other targets too. When the pod goes, the
// processes go back to the cgroups they came from.
type adoptedPod struct {
	ref     stats.PodReference
	node    string
	started time.Time
	cgroup  *podCgroup
	// container and image are the pod's (first) container's, for the
	// cAdvisor series' labels.
	container, image string
	// back are the cgroup.procs files the server came from, one per
	// hierarchy of the pod's cgroup, in the same order as cgroup.procs.
	back []string
}

// adoptInterval between looks for simulated target pods.
const adoptInterval = 2 * time.Second

func (e *Executor) adoptBackends(ctx context.Context) error {
	if e.cgroups.err != nil || time.Since(e.lastAdopt) < adoptInterval {
		return nil
	}
	e.lastAdopt = time.Now()
	svcs, err := e.o.Client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	live := map[types.UID]bool{}
	for _, svc := range svcs.Items {
		backend := svc.Annotations[BackendAnnotation]
		if backend == "" || len(svc.Spec.Selector) == 0 {
			continue
		}
		pods, err := e.o.Client.CoreV1().Pods(svc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
		if err != nil {
			return err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil || p.Spec.NodeName == "" {
				continue
			}
			live[p.UID] = true
			e.mu.Lock()
			_, done := e.adopted[p.UID]
			e.mu.Unlock()
			if !done {
				if err := e.adopt(p, backend); err != nil {
					e.logf("pod %s/%s: the server at %s stays outside its cgroup: %v", p.Namespace, p.Name, backend, err)
					live[p.UID] = false
				}
			}
		}
	}
	e.mu.Lock()
	var gone []*adoptedPod
	for uid, a := range e.adopted {
		if !live[uid] {
			gone = append(gone, a)
			delete(e.adopted, uid)
		}
	}
	e.mu.Unlock()
	for _, a := range gone {
		a.release()
	}
	return nil
}

func (e *Executor) adopt(p *corev1.Pod, backend string) error {
	_, port, err := net.SplitHostPort(backend)
	if err != nil {
		return err
	}
	pid, err := listener(port)
	if err != nil {
		return err
	}
	pids := append([]int{pid}, descendants(pid)...)
	cg, err := e.cgroups.create(string(p.UID), 0, 0)
	if err != nil {
		return err
	}
	a := &adoptedPod{ref: stats.PodReference{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID)},
		node: p.Spec.NodeName, started: time.Now(), cgroup: cg, container: "server"}
	if len(p.Spec.Containers) > 0 {
		a.container, a.image = p.Spec.Containers[0].Name, p.Spec.Containers[0].Image
	}
	for _, procs := range cg.procs {
		// v1: /sys/fs/cgroup/<controller>/dbperf-executor/<uid>/cgroup.procs
		a.back = append(a.back, originalProcs(pid, strings.Split(procs, "/")[4], cg.v2))
	}
	if cg.memoryDir != "" && !cg.v2 {
		// v1 charges memory where it was allocated: move it with the server.
		_ = os.WriteFile(filepath.Join(cg.memoryDir, "memory.move_charge_at_immigrate"), []byte("3"), 0o644)
	}
	for _, procs := range cg.procs {
		for _, q := range pids {
			if err := os.WriteFile(procs, []byte(strconv.Itoa(q)), 0o644); err != nil && q == pid {
				a.release()
				return fmt.Errorf("move pid %d into %s: %w", q, procs, err)
			}
		}
	}
	e.mu.Lock()
	e.adopted[p.UID] = a
	e.mu.Unlock()
	e.logf("pod %s/%s: the local server at %s (pid %d and %d children) runs in the pod's cgroup", p.Namespace, p.Name, backend, pid, len(pids)-1)
	return nil
}

// release moves the server back and removes the cgroup.
func (a *adoptedPod) release() {
	for i, procs := range a.cgroup.procs {
		raw, _ := os.ReadFile(procs)
		for _, q := range strings.Fields(string(raw)) {
			if i < len(a.back) {
				_ = os.WriteFile(a.back[i], []byte(q), 0o644)
			}
		}
	}
	a.cgroup.remove()
}

// originalProcs is the cgroup.procs file of pid's cgroup in the hierarchy
// of controller (v1), or in the unified hierarchy (v2).
func originalProcs(pid int, controller string, v2 bool) string {
	raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if v2 && f[0] == "0" {
			return filepath.Join("/sys/fs/cgroup", f[2], "cgroup.procs")
		}
		for _, c := range strings.Split(f[1], ",") {
			if !v2 && c == controller {
				return filepath.Join("/sys/fs/cgroup", controller, f[2], "cgroup.procs")
			}
		}
	}
	if v2 {
		return "/sys/fs/cgroup/cgroup.procs"
	}
	return filepath.Join("/sys/fs/cgroup", controller, "cgroup.procs")
}

// listener is the process listening on the TCP port (the eldest, when a
// parent and its children share the socket).
func listener(port string) (int, error) {
	n, err := strconv.Atoi(port)
	if err != nil {
		return 0, err
	}
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		raw, _ := os.ReadFile(table)
		for _, line := range strings.Split(string(raw), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // LISTEN
				continue
			}
			if i := strings.LastIndexByte(f[1], ':'); i >= 0 && f[1][i+1:] == fmt.Sprintf("%04X", n) {
				inodes["socket:["+f[9]+"]"] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("nothing listens on port %d", n)
	}
	holders := map[int]bool{}
	procs, _ := os.ReadDir("/proc")
	for _, d := range procs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && inodes[link] {
				holders[pid] = true
				break
			}
		}
	}
	for pid := range holders {
		if !holders[ppid(pid)] {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no process holds the socket listening on port %d", n)
}

func ppid(pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	p, _ := strconv.Atoi(f[1])
	return p
}

// descendants of pid, from every process's parent.
func descendants(pid int) []int {
	children := map[int][]int{}
	procs, _ := os.ReadDir("/proc")
	for _, d := range procs {
		if q, err := strconv.Atoi(d.Name()); err == nil {
			children[ppid(q)] = append(children[ppid(q)], q)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// releaseAdopted gives every adopted server back (the executor stops).
func (e *Executor) releaseAdopted() {
	e.mu.Lock()
	all := e.adopted
	e.adopted = map[types.UID]*adoptedPod{}
	e.mu.Unlock()
	for _, a := range all {
		a.release()
	}
}
