package sim

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/dbperf-io/dbperf-operator/test/localdb"
)

// Operator is the release installed by HelmInstall.
type Operator struct {
	Release, Namespace string
	// ServiceAccount is the chart's ServiceAccount, which the manager
	// process impersonates.
	ServiceAccount string
}

// User is the identity of the operator's ServiceAccount.
func (o Operator) User() string {
	return "system:serviceaccount:" + o.Namespace + ":" + o.ServiceAccount
}

// HelmInstall installs the chart (CRDs, RBAC, ServiceAccount, Deployment)
// and waits for it. The Deployment is scaled to zero: no image can run here,
// the manager runs as a local process under the chart's identity instead.
func (c *Cluster) HelmInstall(ctx context.Context, helm, chart, release, namespace string, sets ...string) (Operator, error) {
	args := []string{"upgrade", "--install", release, chart, "--namespace", namespace, "--create-namespace",
		"--kubeconfig", c.Kubeconfig, "--wait", "--timeout", "2m", "--set", "replicaCount=0"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	cmd := exec.CommandContext(ctx, helm, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(c.Dir, "helm-cache"),
		"HELM_CONFIG_HOME="+filepath.Join(c.Dir, "helm-config"), "HELM_DATA_HOME="+filepath.Join(c.Dir, "helm-data"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return Operator{}, fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	fmt.Fprintf(c.log, "%s", out)
	o := Operator{Release: release, Namespace: namespace, ServiceAccount: release}
	if !strings.Contains(release, "dbperf-operator") {
		o.ServiceAccount = release + "-dbperf-operator"
	}
	return o, nil
}

// ImpersonatingKubeconfig writes a kubeconfig that acts as user (and the
// groups a ServiceAccount token carries), so that a process using it has
// exactly the permissions RBAC grants that ServiceAccount.
func (c *Cluster) ImpersonatingKubeconfig(o Operator) (string, error) {
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		return "", err
	}
	for _, ai := range cfg.AuthInfos {
		ai.Impersonate = o.User()
		ai.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + o.Namespace, "system:authenticated"}
	}
	path := filepath.Join(c.Dir, "kubeconfig-"+o.ServiceAccount)
	return path, clientcmd.WriteToFile(*cfg, path)
}

// ManagerProcess is the operator's manager running as a local process.
type ManagerProcess struct {
	cmd  *exec.Cmd
	done chan error
}

// StartManager runs the manager binary against the cluster as the chart's
// ServiceAccount, with leader election in the release namespace.
func (c *Cluster) StartManager(ctx context.Context, bin string, o Operator, log io.Writer, extra ...string) (*ManagerProcess, error) {
	kc, err := c.ImpersonatingKubeconfig(o)
	if err != nil {
		return nil, err
	}
	probe, err := localdb.FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"--kubeconfig", kc, "--leader-elect", "--leader-election-namespace", o.Namespace,
		"--metrics-bind-address", "0", "--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", probe)}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 15 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	m := &ManagerProcess{cmd: cmd, done: make(chan error, 1)}
	go func() { m.done <- cmd.Wait() }()
	return m, nil
}

// Exited reports the manager's exit, if it has exited.
func (m *ManagerProcess) Exited() (bool, error) {
	select {
	case err := <-m.done:
		m.done <- err
		return true, err
	default:
		return false, nil
	}
}

// Kill ends the manager with SIGKILL, as a crash or an evicted pod would,
// and waits for it.
func (m *ManagerProcess) Kill() {
	if gone, _ := m.Exited(); gone {
		return
	}
	_ = m.cmd.Process.Kill()
	err := <-m.done
	m.done <- err
}

// Stop interrupts the manager and waits for it.
func (m *ManagerProcess) Stop() {
	if gone, _ := m.Exited(); gone {
		return
	}
	_ = m.cmd.Process.Signal(os.Interrupt)
	var err error
	select {
	case err = <-m.done:
	case <-time.After(20 * time.Second):
		_ = m.cmd.Process.Kill()
		err = <-m.done
	}
	m.done <- err // Exited keeps answering
}

// Pid is the manager process's id, for reading its memory and CPU from /proc.
func (m *ManagerProcess) Pid() int { return m.cmd.Process.Pid }
