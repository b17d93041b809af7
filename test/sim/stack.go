package sim

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/client-go/dynamic"

	"github.com/dbperf-io/dbperf-operator/test/executor"
)

// StackOptions configure Up.
type StackOptions struct {
	Name    string
	Dir     string // work directory; must be searchable by others (pods run as their runAsUser)
	BinDir  string // control-plane binaries
	Helm    string // helm binary
	Chart   string // charts/dbperf-operator
	Manager string // manager binary
	Runner  string // dbperf-runner binary
	// Runners map runner images to other builds' binaries (executor.Options.Runners).
	Runners    map[string]string
	CNPGCRDs   string // directory of CloudNativePG's CRDs to install; optional
	Pools      []Pool // default DefaultPools()
	Log        io.Writer
	Progress   func(string) // called before each step; optional
	ManagerLog io.Writer    // default Log
	// HelmSets are extra --set values of the chart (telemetry.resources=kubelet).
	HelmSets []string
	// ManagerArgs are extra flags of the manager (--telemetry-resources=kubelet).
	ManagerArgs []string
	// Images are more image repositories the test executor maps to local
	// directories (a custom workload's image), beside executor.DefaultImages.
	Images map[string][]string
	// PlayServers: local servers stand for the operator's Valkey, MySQL and
	// MongoDB targets and CloudNativePG's Clusters (executor.Options), as
	// the embedded cluster runs every sample.
	PlayServers bool
}

// Stack is the simulated cluster with the operator installed by its chart,
// the manager running as the chart's ServiceAccount and the test executor
// running workload pods.
type Stack struct {
	*Cluster
	Operator Operator
	Manager  *ManagerProcess
	stopExec context.CancelFunc
	execDone chan struct{}
	opts     StackOptions
}

// RestartManager kills the manager (SIGKILL) and starts another with the
// same flags, which takes over once the dead one's leader lease expires.
func (s *Stack) RestartManager(ctx context.Context) error {
	s.Manager.Kill()
	return s.startAgain(ctx)
}

// StopStartManager stops the manager cleanly (SIGINT: it releases its
// leader Lease) and starts another with the same flags, which leads at once.
func (s *Stack) StopStartManager(ctx context.Context) error {
	s.Manager.Stop()
	return s.startAgain(ctx)
}

func (s *Stack) startAgain(ctx context.Context) error {
	m, err := s.StartManager(ctx, s.opts.Manager, s.Operator, s.opts.ManagerLog, s.opts.ManagerArgs...)
	if err != nil {
		return err
	}
	s.Manager = m
	return nil
}

// InstallCNPGCRDs installs CloudNativePG's CRDs from dir, as its release
// manifest would (server-side: they are too big for kubectl's annotation).
func (c *Cluster) InstallCNPGCRDs(ctx context.Context, dir string) error {
	if out, err := c.Kubectl(ctx, nil, "apply", "--server-side", "-f", dir); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}

// ReplaceManager kills the manager (SIGKILL) and starts bin with args in
// its place, as a Deployment's rollout to a new image would: an upgrade.
func (s *Stack) ReplaceManager(ctx context.Context, bin string, args ...string) error {
	s.Manager.Kill()
	s.opts.Manager, s.opts.ManagerArgs = bin, args
	m, err := s.StartManager(ctx, bin, s.Operator, s.opts.ManagerLog, args...)
	if err != nil {
		return err
	}
	s.Manager = m
	return nil
}

// Up starts everything; Stop undoes it.
func Up(ctx context.Context, o StackOptions) (_ *Stack, err error) {
	step := func(s string) {
		if o.Progress != nil {
			o.Progress(s)
		}
	}
	if o.Pools == nil {
		o.Pools = DefaultPools()
	}
	if o.ManagerLog == nil {
		o.ManagerLog = o.Log
	}
	step("starting the simulated cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)")
	c, err := Start(ctx, Options{Name: o.Name, BinDir: o.BinDir, Dir: filepath.Join(o.Dir, "cluster"), Log: o.Log})
	if err != nil {
		return nil, err
	}
	s := &Stack{Cluster: c, opts: o}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	step(fmt.Sprintf("creating simulated nodes in %d pools", len(o.Pools)))
	if err := c.CreateNodes(ctx, o.Pools); err != nil {
		return nil, err
	}
	if o.CNPGCRDs != "" {
		step("installing the CloudNativePG CRDs")
		if err := c.InstallCNPGCRDs(ctx, o.CNPGCRDs); err != nil {
			return nil, err
		}
	}
	step("helm install dbperf-operator (CRDs, RBAC, ServiceAccount)")
	if s.Operator, err = c.HelmInstall(ctx, o.Helm, o.Chart, "dbperf-operator", "dbperf-system", o.HelmSets...); err != nil {
		return nil, err
	}
	step("starting the manager as " + s.Operator.User())
	if s.Manager, err = c.StartManager(ctx, o.Manager, s.Operator, o.ManagerLog, o.ManagerArgs...); err != nil {
		return nil, err
	}
	step("starting the test executor (runs workload pods as local processes)")
	podsDir := filepath.Join(o.Dir, "pods")
	if err := os.MkdirAll(podsDir, 0o755); err != nil {
		return nil, err
	}
	images := executor.DefaultImages()
	for repo, dirs := range o.Images {
		images[repo] = dirs
	}
	var dyn dynamic.Interface
	if o.PlayServers {
		if dyn, err = dynamic.NewForConfig(c.Config); err != nil {
			return nil, err
		}
	}
	ex, err := executor.New(executor.Options{Client: c.Clientset, RunnerPath: o.Runner, Runners: o.Runners, WorkDir: podsDir,
		KubeletAddr: c.KubeletAddr(), Log: o.Log, Images: images, PlayServers: o.PlayServers, Dynamic: dyn})
	if err != nil {
		return nil, err
	}
	exCtx, cancel := context.WithCancel(context.Background())
	s.stopExec, s.execDone = cancel, make(chan struct{})
	go func() { _ = ex.Run(exCtx); close(s.execDone) }()
	return s, nil
}

// Stop stops the executor, the manager and the cluster.
func (s *Stack) Stop() {
	if s.stopExec != nil {
		s.stopExec()
		<-s.execDone
	}
	if s.Manager != nil {
		s.Manager.Stop()
	}
	s.Cluster.Stop()
}
