// Package executor is the test executor of the local simulated cluster: a
// stand-in kubelet for dbperf workload pods. It watches pods bound to
// simulated nodes that carry bench.dbperf.io/role loadgen, prepare or
// disturbance (a noisy neighbour's stress pod: `dbperf-runner stress`), runs
// their container's command as a local process — the dbperf-runner of this
// build in place of the one the init container installs, the tool from the
// local installation that stands for the pod's image — against local database
// servers, and reports the container's termination (exit code, reason,
// termination message) and the pod's phase the way a kubelet does. It serves
// the containers' logs on the nodes' kubelet endpoint.
//
// What it emulates, and how:
//   - image → tools: Options.Images maps an image repository to local
//     directories; a pod whose tool is not installed here fails with reason
//     ToolNotInstalled, never with a made-up result;
//   - env: literal values, Secret and ConfigMap keys, downward-API fields;
//   - volumes: each mount is a directory of the pod's work directory, and
//     paths under a mount are rewritten to it;
//   - Services: a name <svc>.<ns>.svc[.cluster.local] in an env value or an
//     argument is rewritten to a loopback address of its own on which a
//     forwarder listens on the Service's ports and forwards to the Service's
//     ready endpoints (kube-proxy's job);
//   - CPU: when the executor may create cgroups (root), each pod's process
//     runs in a cgroup of its own with the container's CPU limit, and the
//     runner measures that cgroup, as it would in a pod; otherwise the runner
//     sees the whole machine and says so in the log;
//   - users: as root, the process runs as the pod's runAsUser/runAsGroup;
//   - statistics: /stats/summary on the kubelet endpoint, from the pods'
//     cgroups and the machine (stats.go), and cAdvisor's
//     /metrics/cadvisor from the same cgroups (cadvisor.go); the local server behind a
//     simulated target pod's Service is moved into a cgroup of that pod
//     (adopt.go);
//   - target pods: a ClickHouse target's pod is played by Debian's
//     clickhouse-server with a configuration translated from the pod's
//     (clickhouse.go); other target pods stay kwok's, with a local server
//     the test points their Service at.
package executor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// WorkloadSelector selects the pods the executor runs.
const WorkloadSelector = "bench.dbperf.io/role in (loadgen,prepare,disturbance)"

// Options configure an Executor.
type Options struct {
	Client kubernetes.Interface
	// RunnerPath is the dbperf-runner binary that stands for the one the
	// pod's init container installs.
	RunnerPath string
	// Runners maps a runner image (the init container's) to the binary that
	// stands for it, for pods of another build than RunnerPath's (an upgrade
	// test: the Jobs of the manager before it run the runner before it).
	Runners map[string]string
	// Images maps an image repository (tag and registry host dropped, e.g.
	// "postgres", "redis", "redislabs/memtier_benchmark") to the local
	// directories holding its tools. DefaultImages discovers them.
	Images map[string][]string
	// ImagePaths maps, per image repository, paths inside the image to
	// local ones (YCSB's /opt/ycsb/lib → the jars from Maven Central); they
	// are replaced wherever they appear in arguments, environment values and
	// mounted ConfigMap files. DefaultImagePaths discovers them.
	ImagePaths map[string]map[string]string
	// ImageWorkDirs maps an image repository to the local directory that
	// stands for the image's working directory (its WORKDIR), where a
	// container without a workingDir of its own starts: HammerDB's image
	// runs ./hammerdbcli from its installation. DefaultImageWorkDirs
	// discovers them.
	ImageWorkDirs map[string]string
	// WorkDir holds one directory per pod: volumes, log, termination message.
	WorkDir string
	// KubeletAddr, when set (host:port, the nodes' address), serves the
	// kubelet endpoint: container logs and /stats/summary.
	KubeletAddr string
	// PollInterval between pod listings; default 200ms.
	PollInterval time.Duration
	Log          io.Writer
	// PlayServers makes local servers stand for the operator's Valkey,
	// MySQL and MongoDB target pods and for CloudNativePG's Clusters (one
	// PostgreSQL each; Dynamic is then required), and provisions volumes
	// for pending claims (volumes.go), as the embedded cluster needs to run
	// every sample. Off, only ClickHouse target pods are
	// played, and tests play the others with servers of their own.
	PlayServers bool
	Dynamic     dynamic.Interface
}

// Executor runs workload pods as local processes.
type Executor struct {
	o        Options
	mu       sync.Mutex
	pods     map[types.UID]*podRun
	services *serviceProxy
	cgroups  cgroupManager
	// adopted are the simulated target pods whose local server runs in a
	// cgroup of the pod (adopt.go), under mu.
	adopted   map[types.UID]*adoptedPod
	lastAdopt time.Time
	// played are the local servers that stand for simulated target pods
	// (clickhouse.go), under mu.
	played   map[types.UID]*playedServer
	lastPlay time.Time
	// starting are the target pods whose server is starting (their
	// namespace), retryAt when a failed start is tried again; under mu.
	starting map[types.UID]string
	retryAt  map[types.UID]time.Time
	// clusters are the CloudNativePG Clusters played (cnpg.go), under mu.
	clusters     map[types.UID]*playedCluster
	lastClusters time.Time
	lastVolumes  time.Time
}

// New returns an executor; call Run.
func New(o Options) (*Executor, error) {
	if o.Client == nil || o.RunnerPath == "" || o.WorkDir == "" {
		return nil, fmt.Errorf("executor: Client, RunnerPath and WorkDir are required")
	}
	if _, err := os.Stat(o.RunnerPath); err != nil {
		return nil, fmt.Errorf("executor: runner: %w", err)
	}
	if o.PollInterval == 0 {
		o.PollInterval = 200 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Images == nil {
		o.Images = DefaultImages()
	}
	if o.ImagePaths == nil {
		o.ImagePaths = DefaultImagePaths()
	}
	if o.ImageWorkDirs == nil {
		o.ImageWorkDirs = DefaultImageWorkDirs()
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		// Pods run as their runAsUser, which must reach its directory.
		if err := traversable(o.WorkDir); err != nil {
			return nil, err
		}
	}
	if os.Geteuid() == 0 {
		// Tools in root's home (k6 and the YCSB jars in ~/.cache) are out
		// of reach of the pods' users: stage a readable copy, as an image
		// would hold them.
		if err := stageReadable(&o); err != nil {
			return nil, err
		}
	}
	e := &Executor{o: o, pods: map[types.UID]*podRun{}, cgroups: newCgroupManager(), adopted: map[types.UID]*adoptedPod{},
		played: map[types.UID]*playedServer{}, clusters: map[types.UID]*playedCluster{},
		starting: map[types.UID]string{}, retryAt: map[types.UID]time.Time{}}
	e.services = &serviceProxy{client: o.Client, log: o.Log}
	return e, nil
}

func (e *Executor) logf(format string, args ...any) {
	fmt.Fprintf(e.o.Log, "executor: "+format+"\n", args...)
}

// Run watches pods until ctx ends, then stops every process it started.
func (e *Executor) Run(ctx context.Context) error {
	e.logf("running dbperf workload pods with %s; cgroups: %s", e.o.RunnerPath, e.cgroups.describe())
	var srv *http.Server
	if e.o.KubeletAddr != "" {
		var err error
		if srv, err = e.serveLogs(e.o.KubeletAddr); err != nil {
			return err
		}
	}
	defer func() {
		if srv != nil {
			_ = srv.Close()
		}
		e.services.close()
		e.releaseAdopted()
		e.stopPlayed()
		e.mu.Lock()
		runs := make([]*podRun, 0, len(e.pods))
		for _, r := range e.pods {
			runs = append(runs, r)
		}
		e.mu.Unlock()
		for _, r := range runs {
			r.cancel()
			<-r.done
		}
	}()
	t := time.NewTicker(e.o.PollInterval)
	defer t.Stop()
	for {
		if err := e.sync(ctx); err != nil && ctx.Err() == nil {
			e.logf("list pods: %v", err)
		}
		if err := e.playTargets(ctx); err != nil && ctx.Err() == nil {
			e.logf("played target pods: %v", err)
		}
		if err := e.playClusters(ctx); err != nil && ctx.Err() == nil {
			e.logf("played CloudNativePG Clusters: %v", err)
		}
		if err := e.provisionVolumes(ctx); err != nil && ctx.Err() == nil {
			e.logf("played volumes: %v", err)
		}
		if err := e.adoptBackends(ctx); err != nil && ctx.Err() == nil {
			e.logf("simulated target pods: %v", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (e *Executor) sync(ctx context.Context) error {
	pods, err := e.o.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: WorkloadSelector})
	if err != nil {
		return err
	}
	seen := map[types.UID]bool{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		seen[pod.UID] = true
		e.mu.Lock()
		run, known := e.pods[pod.UID]
		e.mu.Unlock()
		switch {
		case known && pod.DeletionTimestamp != nil:
			run.cancel() // the kubelet kills the containers of a deleted pod
		case known:
			// The kubelet refreshes downward-API files when metadata
			// changes (the start barrier of parallel load generators).
			if err := writeDownwardAPI(pod, filepath.Join(run.dir, "volumes")); err != nil {
				e.logf("pod %s/%s: downward API: %v", pod.Namespace, pod.Name, err)
			}
		case pod.Spec.NodeName == "", pod.DeletionTimestamp != nil:
		case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		case pod.Status.Phase == corev1.PodRunning:
			// Running but not ours: started by an executor that is gone.
			e.failOrphan(ctx, pod)
		default:
			// The target's server runs before the load starts: play and
			// adopt it now rather than on the next round, so that the
			// Service leads to it and its pod's cgroup counts the whole
			// measurement.
			e.lastPlay = time.Time{}
			if err := e.playTargets(ctx); err != nil && ctx.Err() == nil {
				e.logf("played target pods: %v", err)
			}
			e.waitForTargets(ctx, pod.Namespace)
			e.lastAdopt = time.Time{}
			if err := e.adoptBackends(ctx); err != nil && ctx.Err() == nil {
				e.logf("simulated target pods: %v", err)
			}
			e.start(ctx, pod)
		}
	}
	e.mu.Lock()
	for uid, r := range e.pods {
		if !seen[uid] {
			r.cancel()
		}
	}
	e.mu.Unlock()
	return nil
}

// DefaultImages maps the images dbperf workloads use by default to the tools
// installed on this machine (Debian's PostgreSQL and Redis packages).
func DefaultImages() map[string][]string {
	m := map[string][]string{}
	pg, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(pg))) // newest first
	m["postgres"] = pg
	if p, err := exec.LookPath("redis-benchmark"); err == nil {
		m["redis"] = []string{filepath.Dir(p)}
		m["valkey/valkey"] = []string{filepath.Dir(p)}
	}
	// memtier_benchmark and HammerDB built by hack/build-tools.sh (MEMTIER
	// and HAMMERDB_HOME name them, or they are found in its cache).
	if p := memtierBin(); p != "" {
		m["redislabs/memtier_benchmark"] = []string{filepath.Dir(p)}
	} else if p, err := exec.LookPath("memtier_benchmark"); err == nil {
		m["redislabs/memtier_benchmark"] = []string{filepath.Dir(p)}
	}
	if home := hammerdbHome(); home != "" {
		m[hammerdbImage] = []string{home}
	}
	// k6 with dbperf's output extension, built from the Go module proxy
	// and this repository (hack/build-k6.sh; K6, or its cache): the k6
	// image of ours, and Grafana's (whose k6 lacks the extension: pods of
	// that image still find it here, and aggregate in k6).
	k6 := k6Bin()
	if k6 == "" {
		k6, _ = exec.LookPath("k6")
	}
	if k6 != "" {
		m[k6Image] = []string{filepath.Dir(k6)}
		m["grafana/k6"] = []string{filepath.Dir(k6)}
	}
	// YCSB: the local Java runs the jars from Maven Central (YCSB_LIB, or
	// hack/fetch-ycsb.sh's cache).
	if java, err := exec.LookPath("java"); err == nil && ycsbLib() != "" {
		m[ycsbImage] = []string{filepath.Dir(java)}
	}
	return m
}

// hammerdbImage is the repository of HammerDB's official image.
const hammerdbImage = "tpcorg/hammerdb"

// DefaultImageWorkDirs: HammerDB's image works in its installation, which
// HAMMERDB_HOME names here.
func DefaultImageWorkDirs() map[string]string {
	m := map[string]string{}
	if home := hammerdbHome(); home != "" {
		m[hammerdbImage] = home
	}
	return m
}

// ycsbImage is the repository of the default YCSB image.
const ycsbImage = "dbperf-io/ycsb"

// k6Image is the repository of the default k6 image.
const k6Image = "dbperf-io/k6"

// DefaultImagePaths maps the YCSB image's installation to YCSB_LIB.
func DefaultImagePaths() map[string]map[string]string {
	m := map[string]map[string]string{}
	if lib := ycsbLib(); lib != "" {
		m[ycsbImage] = map[string]string{"/opt/ycsb/lib": lib, "/opt/ycsb/conf": lib}
	}
	return m
}

// ImageRepository drops the registry host, the tag and the digest:
// "docker.io/library/postgres:17" → "postgres".
func ImageRepository(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		image = image[:i]
	}
	parts := strings.Split(image, "/")
	if len(parts) > 1 && (strings.ContainsAny(parts[0], ".:") || parts[0] == "localhost") {
		parts = parts[1:]
	}
	if len(parts) == 2 && parts[0] == "library" {
		parts = parts[1:]
	}
	return strings.Join(parts, "/")
}

// traversable checks that every directory on the way to dir lets others pass
// (o+x), so that a pod's process running as its own user can reach its files.
func traversable(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := abs; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("executor: work directory %s: %s is not searchable by other users (mode %v), so pods running as their runAsUser cannot reach their files; chmod o+x it or choose another WorkDir", dir, d, fi.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// stageReadable replaces every tool directory and image path that other
// users cannot reach by a copy under WorkDir/images.
func stageReadable(o *Options) error {
	staged := map[string]string{}
	stage := func(dir string) (string, error) {
		if traversable(dir) == nil {
			return dir, nil
		}
		if s, ok := staged[dir]; ok {
			return s, nil
		}
		dst := filepath.Join(o.WorkDir, "images", fmt.Sprintf("%d-%s", len(staged), filepath.Base(dir)))
		if err := copyTree(dir, dst); err != nil {
			return "", fmt.Errorf("executor: staging %s for the pods' users: %w", dir, err)
		}
		staged[dir] = dst
		return dst, nil
	}
	images := map[string][]string{}
	for repo, dirs := range o.Images {
		for _, d := range dirs {
			s, err := stage(d)
			if err != nil {
				return err
			}
			images[repo] = append(images[repo], s)
		}
	}
	paths := map[string]map[string]string{}
	for repo, m := range o.ImagePaths {
		paths[repo] = map[string]string{}
		for from, to := range m {
			s, err := stage(to)
			if err != nil {
				return err
			}
			paths[repo][from] = s
		}
	}
	workDirs := map[string]string{}
	for repo, d := range o.ImageWorkDirs {
		s, err := stage(d)
		if err != nil {
			return err
		}
		workDirs[repo] = s
	}
	o.Images, o.ImagePaths, o.ImageWorkDirs = images, paths, workDirs
	return nil
}

// copyTree copies regular files, directories and symbolic links (as links:
// HammerDB's bin/tclsh8.6 names the system's Tcl), readable (and, where the
// source is, executable) by everyone.
func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			_ = os.Remove(target)
			return os.Symlink(link, target)
		case fi.IsDir():
			return os.MkdirAll(target, 0o755)
		case fi.Mode().IsRegular():
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			mode := os.FileMode(0o644)
			if fi.Mode()&0o111 != 0 {
				mode = 0o755
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		}
		return nil
	})
}
