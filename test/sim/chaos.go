package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// What chaos tests need beside the stack: who leads, and which local
// process plays a workload pod's container.

// leaseName is the manager's leader-election Lease (LeaderElectionID in
// cmd/manager), in the release namespace.
const leaseName = "dbperf-operator.bench.dbperf.io"

// Dir is the stack's work directory (components.log is in it when the
// caller put it there).
func (s *Stack) Dir() string { return s.opts.Dir }

// LeaseHolder is the identity holding the manager's leader Lease, "" while
// there is none. Every manager process has an identity of its own.
func (s *Stack) LeaseHolder(ctx context.Context) (string, error) {
	l, err := s.Clientset.CoordinationV1().Leases(s.Operator.Namespace).Get(ctx, leaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil || l.Spec.HolderIdentity == nil {
		return "", err
	}
	return *l.Spec.HolderIdentity, nil
}

// WaitForNewLeader waits until a manager other than previous ("" for any)
// holds the Lease, and returns its identity. After a SIGKILL the Lease
// names the dead manager until it expires.
func (s *Stack) WaitForNewLeader(ctx context.Context, previous string, within time.Duration) (string, error) {
	deadline := time.Now().Add(within)
	for {
		holder, err := s.LeaseHolder(ctx)
		if err == nil && holder != "" && holder != previous {
			return holder, nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return "", fmt.Errorf("no new manager took the lease from %q within %s: %w", previous, within, err)
			}
			return "", fmt.Errorf("no new manager took the lease from %q within %s (holder %q)", previous, within, holder)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// PodProcess finds the local process that runs a workload pod's container
// program (its base name, e.g. dbperf-runner): the executor gives every pod
// a work directory named after its UID, which the runner's arguments name
// (--summary-file). 0 when there is none (yet).
func PodProcess(podUID types.UID, program string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if filepath.Base(argv[0]) == program && strings.Contains(string(raw), string(podUID)) {
			return pid
		}
	}
	return 0
}

// Children lists the processes whose parent is pid.
func Children(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so split after ')'.
		s := string(raw)
		rest := s[strings.LastIndexByte(s, ')')+1:]
		if f := strings.Fields(rest); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}
