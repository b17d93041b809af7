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
}

// Options configure Start.
type Options struct {
	Name   string // kwokctl cluster name; default "dbperf"
	Dir    string // work directory; default a new temporary directory
	BinDir string // control-plane binaries; required
	Log    io.Writer
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
		Kubeconfig: filepath.Join(o.Dir, "kubeconfig")}
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
	bin := func(n string) string { return filepath.Join(o.BinDir, n) }
	args := []string{"create", "cluster", "--name", o.Name, "--runtime", "binary", "--config", cfgPath,
		"--kubeconfig", c.Kubeconfig, "--wait", "2m",
		"--etcd-binary", bin("etcd"), "--kube-apiserver-binary", bin("kube-apiserver"),
		"--kube-controller-manager-binary", bin("kube-controller-manager"),
		"--kube-scheduler-binary", bin("kube-scheduler"), "--kwok-controller-binary", bin("kwok")}
	if err := c.kwokctl(ctx, args...); err != nil {
		c.Stop()
		return nil, fmt.Errorf("kwokctl create cluster: %w (logs in %s)", err, filepath.Join(o.Dir, "clusters", o.Name, "logs"))
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		c.Stop()
		return nil, err
	}
	cfg.QPS, cfg.Burst = 50, 100
	c.Config = cfg
	if c.Clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.waitReady(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
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
	deadline := time.Now().Add(2 * time.Minute)
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
	return fmt.Errorf("simulated cluster not ready after 2m: %w", last)
}

// Stop deletes the cluster: its processes stop, its data and its node
// address go.
func (c *Cluster) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.kwokctl(ctx, "delete", "cluster", "--name", c.Name); err != nil {
		fmt.Fprintf(c.log, "sim: kwokctl delete cluster: %v\n", err)
	}
	if c.ownNodeAddr {
		if err := releaseNodeAddr(c.NodeAddr); err != nil {
			fmt.Fprintf(c.log, "sim: %v\n", err)
		}
		c.ownNodeAddr = false
	}
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
