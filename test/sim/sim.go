// Package sim runs the local simulated cluster: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok, all built from the Go
// module proxy (hack/build-control-plane.sh) and started by kwokctl's binary
// runtime, every one of them on 127.0.0.1 (the nodes' address is a private
// one on lo when run as root: nodeaddr.go). Nodes are kwok's simulated nodes,
// created in named pools with the labels a cloud node carries; pods of dbperf
// workloads on them are run by the test executor (test/executor), every other
// pod is made Ready by kwok.
package sim

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dbperf-io/dbperf-operator/test/localdb"
)

//go:embed stages.yaml.tmpl
var stagesTemplate string

// Cluster is a running simulated cluster.
type Cluster struct {
	Name string
	// Dir holds kwokctl's work directory, the kubeconfig and the logs.
	Dir string
	// BinDir holds the control-plane binaries (kubectl among them).
	BinDir string
	// Kubeconfig is the admin kubeconfig file.
	Kubeconfig string
	// KubeletPort is where nodes say their kubelet listens, on NodeAddr;
	// the test executor serves container logs and statistics there.
	KubeletPort int
	// NodeAddr is every node's InternalIP: a private address of the
	// cluster's own on lo when run as root (the API server's node proxy
	// refuses loopback addresses: nodeaddr.go), else 127.0.0.1.
	NodeAddr    string
	ownNodeAddr bool
	Config      *rest.Config
	Clientset   kubernetes.Interface
	log         io.Writer
	auditPolicy string
}

// Options configure Start.
type Options struct {
	Name   string // kwokctl cluster name; default "dbperf"
	Dir    string // work directory; default a new temporary directory
	BinDir string // control-plane binaries; required
	Log    io.Writer
	// AuditPolicy, when set, is the API server's audit policy file; the
	// log is AuditLog(). The scale benchmark counts each actor's writes
	// from it.
	AuditPolicy string
}

// Start creates and starts a cluster and waits until its API answers.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.BinDir == "" {
		return nil, errors.New("sim: BinDir (the control-plane binaries) is required; run hack/build-control-plane.sh")
	}
	if o.Name == "" {
		o.Name = "dbperf"
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "dbperf-sim-")
		if err != nil {
			return nil, err
		}
		o.Dir = d
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	port, err := localdb.FreePort()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Name: o.Name, Dir: o.Dir, BinDir: o.BinDir, KubeletPort: port, log: o.Log,
		Kubeconfig: filepath.Join(o.Dir, "kubeconfig"), auditPolicy: o.AuditPolicy}
	c.NodeAddr, c.ownNodeAddr = claimNodeAddr(o.Log)
	cfgPath := filepath.Join(o.Dir, "kwokctl.yaml")
	var b bytes.Buffer
	t := template.Must(template.New("stages").Delims("[[", "]]").Parse(stagesTemplate))
	if err := t.Execute(&b, c); err != nil {
		return nil, err
	}
	if err := os.WriteFile(cfgPath, b.Bytes(), 0o644); err != nil {
		c.Stop()
		return nil, err
	}
	// kwokctl picks its components' ports by counting down from 32767 and
	// taking the first one nothing listens on, so two clusters created at the
	// same moment (test packages run in parallel) get the same ports and one
	// API server never serves. Creations are serialized across processes
	// until the API answers: by then every port of this cluster is bound and
	// the next kwokctl counts past them.
	unlock, err := lockCreation(ctx)
	if err != nil {
		c.Stop()
		return nil, err
	}
	defer unlock()
	if err := c.create(ctx, cfgPath); err != nil {
		// Once more, with the failed attempt's logs kept beside it.
		kept := c.keepLogs("failed-start")
		fmt.Fprintf(o.Log, "sim: %v; its logs are in %s; creating the cluster again\n", err, kept)
		c.deleteCluster()
		if err := c.create(ctx, cfgPath); err != nil {
			kept := c.keepLogs("failed-start-2")
			c.Stop()
			return nil, fmt.Errorf("%w (logs in %s)", err, kept)
		}
	}
	return c, nil
}

// create runs kwokctl create cluster and waits until the API serves.
func (c *Cluster) create(ctx context.Context, cfgPath string) error {
	bin := func(n string) string { return filepath.Join(c.BinDir, n) }
	args := []string{"create", "cluster", "--name", c.Name, "--runtime", "binary", "--config", cfgPath,
		"--kubeconfig", c.Kubeconfig, "--wait", "1m",
		"--etcd-binary", bin("etcd"), "--kube-apiserver-binary", bin("kube-apiserver"),
		"--kube-controller-manager-binary", bin("kube-controller-manager"),
		"--kube-scheduler-binary", bin("kube-scheduler"), "--kwok-controller-binary", bin("kwok")}
	if c.auditPolicy != "" {
		args = append(args, "--kube-audit-policy", c.auditPolicy)
	}
	if err := c.kwokctl(ctx, args...); err != nil {
		return fmt.Errorf("kwokctl create cluster: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100
	c.Config = cfg
	if c.Clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	return c.waitReady(ctx)
}

// lockCreation takes an exclusive lock shared by every process on this
// machine that creates a simulated cluster.
func lockCreation(ctx context.Context) (func(), error) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "dbperf-sim-create.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("sim: the creation lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("sim: the creation lock: %w", err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("sim: waiting for another cluster's creation: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// keepLogs copies the components' logs out of kwokctl's directory, which
// deleting the cluster removes, and says where they went.
func (c *Cluster) keepLogs(as string) string {
	src := filepath.Join(c.Dir, "clusters", c.Name, "logs")
	dst := filepath.Join(c.Dir, as)
	entries, err := os.ReadDir(src)
	if err != nil {
		return src + " (" + err.Error() + ")"
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return src
	}
	for _, e := range entries {
		if raw, err := os.ReadFile(filepath.Join(src, e.Name())); err == nil {
			_ = os.WriteFile(filepath.Join(dst, e.Name()), raw, 0o644)
		}
	}
	return dst
}

func (c *Cluster) kwokctl(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.BinDir, "kwokctl"), args...)
	cmd.Env = append(os.Environ(), "KWOK_WORKDIR="+c.Dir, "PATH="+c.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Stdout, cmd.Stderr = c.log, c.log
	return cmd.Run()
}

// waitReady waits for /readyz and for the default ServiceAccount, which the
// controller manager creates and every pod needs.
func (c *Cluster) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	var last error
	for time.Now().Before(deadline) {
		body, err := c.Clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && string(body) == "ok" {
			if _, err = c.Clientset.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1GetOptions); err == nil {
				return nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("simulated cluster not ready after 1m: %w", last)
}

// Stop deletes the cluster: its processes stop, its data and its node
// address go.
func (c *Cluster) Stop() {
	c.deleteCluster()
	if c.ownNodeAddr {
		if err := releaseNodeAddr(c.NodeAddr); err != nil {
			fmt.Fprintf(c.log, "sim: %v\n", err)
		}
		c.ownNodeAddr = false
	}
}

func (c *Cluster) deleteCluster() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.kwokctl(ctx, "delete", "cluster", "--name", c.Name); err != nil {
		fmt.Fprintf(c.log, "sim: kwokctl delete cluster: %v\n", err)
	}
}

// AuditLog is the API server's audit log, written when the cluster was
// started with an AuditPolicy.
func (c *Cluster) AuditLog() string {
	return filepath.Join(c.Dir, "clusters", c.Name, "logs", "audit.log")
}

// KubeletAddr is where the test executor serves the nodes' kubelet
// endpoint: the nodes' address and KubeletPort.
func (c *Cluster) KubeletAddr() string {
	return net.JoinHostPort(c.NodeAddr, strconv.Itoa(c.KubeletPort))
}

// Kubectl runs the cluster's kubectl with the admin kubeconfig.
func (c *Cluster) Kubectl(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.BinDir, "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
