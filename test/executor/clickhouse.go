package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/dbperf-io/dbperf-operator/test/localdb"
)

// A ClickHouse target pod (image clickhouse/clickhouse-server) is played
// by Debian's clickhouse-server 18.16: kwok makes the pod Ready, and the
// executor starts a local server for it and points the pod's client Service
// at it (BackendAnnotation; adopt.go then moves it into the pod's cgroup).
// 18.16 reads neither the official image's environment nor its config.d
// layout, so the executor translates: a config.xml of its own (127.0.0.1,
// free ports, the pod's directory), a users.xml with the user and password
// of the pod's CLICKHOUSE_USER and CLICKHOUSE_PASSWORD and log_queries on,
// and the CLICKHOUSE_DB database created through the HTTP interface once the
// server answers. Connections to the Service wait for that (starting).
//
// Only an unreplicated server is played: 18.16 has no Keeper, so the pods
// of a replicated shard and Keeper's stay without a server and say so in
// the executor's log.
const clickHouseImage = "clickhouse/clickhouse-server"

// playInterval between looks for ClickHouse target pods.
const playInterval = 500 * time.Millisecond

// playedServer is the local server that stands for one target pod: a
// process of the executor's (ClickHouse) or a server with its own stop.
type playedServer struct {
	cmd    *exec.Cmd
	dir    string
	cancel context.CancelFunc
	done   chan struct{}
	stopFn func()
}

// playTargets starts a server for each new target pod whose image has a
// player (play_servers.go), each in the background (a server may take a
// minute to come up, and the executor's loop must go on), and stops those
// whose pod is gone. A start that failed for a reason that may pass (a
// Secret not there yet) is tried again after playRetry.
func (e *Executor) playTargets(ctx context.Context) error {
	if time.Since(e.lastPlay) < playInterval {
		return nil
	}
	e.lastPlay = time.Now()
	pods, err := e.o.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "bench.dbperf.io/role=target"})
	if err != nil {
		return err
	}
	live := map[types.UID]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || len(p.Spec.Containers) == 0 {
			continue
		}
		repo := ImageRepository(p.Spec.Containers[0].Image)
		play, ok := players[repo]
		if repo != clickHouseImage && !e.o.PlayServers {
			continue // the tests play these with servers of their own
		}
		if !ok && !strings.Contains(repo, "opensearch") {
			continue
		}
		live[p.UID] = true
		e.mu.Lock()
		_, known := e.played[p.UID]
		_, starting := e.starting[p.UID]
		wait := time.Now().Before(e.retryAt[p.UID])
		if !known && !starting && !wait {
			e.starting[p.UID] = p.Namespace
		}
		e.mu.Unlock()
		if known || starting || wait {
			continue
		}
		if why := unplayable(p, repo, ok); why != "" {
			e.logf("pod %s/%s (%s) is not played: %s", p.Namespace, p.Name, repo, why)
			e.settle(p.UID, nil, time.Time{})
			continue
		}
		go func() {
			srv, err := play(e, ctx, p)
			retry := time.Time{}
			if err != nil {
				e.logf("pod %s/%s: no local server for %s: %v", p.Namespace, p.Name, repo, err)
				if !errors.Is(err, localdb.ErrNotInstalled) && !errors.Is(err, errCannotPlay) {
					retry = time.Now().Add(playRetry) // its Secret may come late
				}
			}
			e.settle(p.UID, srv, retry)
		}()
	}
	e.mu.Lock()
	var gone []*playedServer
	for uid, s := range e.played {
		if !live[uid] {
			gone = append(gone, s)
			delete(e.played, uid)
		}
	}
	e.mu.Unlock()
	for _, s := range gone {
		s.stop()
	}
	return nil
}

// playRetry is how long a failed start waits before the next try.
const playRetry = 10 * time.Second

// unplayable says why a target pod gets no server ("" when it gets one).
func unplayable(p *corev1.Pod, repo string, hasPlayer bool) string {
	if role := p.Labels["bench.dbperf.io/instance-role"]; repo == clickHouseImage && role != "" && role != "server" {
		return role + " of a replicated ClickHouse: Debian's clickhouse-server 18.16 has no Keeper"
	}
	if !hasPlayer {
		return "OpenSearch does not run on this machine; its runs fail at their measurement, saying so"
	}
	return ""
}

// settle records how a start ended: the server (nil: none, not tried
// again), or a time to try again.
func (e *Executor) settle(uid types.UID, srv *playedServer, retryAt time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.starting, uid)
	if !retryAt.IsZero() {
		e.retryAt[uid] = retryAt
		return
	}
	delete(e.retryAt, uid)
	e.played[uid] = srv
}

// waitForTargets waits, for at most two minutes, until no target server of
// the namespace is starting: a workload pod's tool finds its target up, as
// it would behind a Ready pod.
func (e *Executor) waitForTargets(ctx context.Context, ns string) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		e.mu.Lock()
		busy := false
		for _, n := range e.starting {
			busy = busy || n == ns
		}
		e.mu.Unlock()
		if !busy {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startClickHouse starts the server of pod p and annotates the Services
// that select p; the database is created in the background once it answers.
func (e *Executor) startClickHouse(ctx context.Context, p *corev1.Pod) (*playedServer, error) {
	bin, err := localdb.Tool("clickhouse-server", "/usr/sbin/clickhouse-server")
	if err != nil {
		return nil, err
	}
	env, err := e.resolveEnv(ctx, p, p.Spec.Containers[0])
	if err != nil {
		return nil, err
	}
	user, password, db := getEnv(env, "CLICKHOUSE_USER"), getEnv(env, "CLICKHOUSE_PASSWORD"), getEnv(env, "CLICKHOUSE_DB")
	if user == "" {
		user = "default"
	}
	httpPort, err := localdb.FreePort()
	if err != nil {
		return nil, err
	}
	tcpPort, err := localdb.FreePort()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(e.o.WorkDir, fmt.Sprintf("%s_%s_%s", p.Namespace, p.Name, p.UID), "clickhouse-server")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Like the official image's entrypoint with the target's users.d
	// override: the pod's user with its password, logging its queries, and
	// no other user.
	files := map[string]string{"config.xml": localdb.ClickHouseConfig(dir, httpPort, tcpPort, true),
		"users.xml": localdb.ClickHouseUsers(localdb.ClickHouseUser{Name: user, Password: password, Network: "::/0"})}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			return nil, err
		}
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s := &playedServer{dir: dir, cancel: cancel, done: make(chan struct{})}
	s.cmd = exec.CommandContext(runCtx, bin, "--config-file="+filepath.Join(dir, "config.xml"))
	s.cmd.Dir = dir
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// As in the pod: its runAsUser, which owns the server's directory.
	if uid, gid, ok := runAs(p, p.Spec.Containers[0]); ok && os.Geteuid() == 0 {
		_ = filepath.Walk(dir, func(f string, _ os.FileInfo, _ error) error { return os.Chown(f, int(uid), int(gid)) })
		_ = os.Chown(filepath.Dir(dir), int(uid), int(gid))
		s.cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		cancel()
		return nil, err
	}
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		log.Close()
		cancel()
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); log.Close(); close(s.done) }()
	backend := "127.0.0.1:" + strconv.Itoa(httpPort)
	// Connections wait until the database exists, as clients of a pod
	// whose readiness probe passed would find it.
	e.services.setStarting(backend, true)
	if err := e.pointServices(ctx, p, backend); err != nil {
		e.services.setStarting(backend, false)
		s.stop()
		return nil, err
	}
	e.logf("pod %s/%s: clickhouse-server 18.16 (pid %d) at %s stands for it, user %s, database %q", p.Namespace, p.Name, s.cmd.Process.Pid, backend, user, db)
	go func() {
		defer e.services.setStarting(backend, false)
		if err := clickHouseInit(runCtx, backend, user, password, db); err != nil && runCtx.Err() == nil {
			raw, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			e.logf("pod %s/%s: clickhouse-server at %s: %v\n%s", p.Namespace, p.Name, backend, err, tailLines(raw, 20))
		}
	}()
	return s, nil
}

// pointServices annotates the Services (not headless) whose selector
// selects the pod with the local backend.
func (e *Executor) pointServices(ctx context.Context, p *corev1.Pod, backend string) error {
	svcs, err := e.o.Client.CoreV1().Services(p.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, BackendAnnotation, backend)
	for _, svc := range svcs.Items {
		if svc.Spec.ClusterIP == corev1.ClusterIPNone || len(svc.Spec.Selector) == 0 ||
			!labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(p.Labels)) {
			continue
		}
		if _, err := e.o.Client.CoreV1().Services(p.Namespace).Patch(ctx, svc.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("service %s: %w", svc.Name, err)
		}
	}
	return nil
}

// clickHouseInit waits for the server to answer and creates the database,
// what the official image's entrypoint does with CLICKHOUSE_DB.
func clickHouseInit(ctx context.Context, backend, user, password, db string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := localdb.ClickHouseHTTP(ctx, backend, user, password, "SELECT 1")
		if err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("not answering after 60s: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if db == "" {
		return nil
	}
	_, err := localdb.ClickHouseHTTP(ctx, backend, user, password, "CREATE DATABASE IF NOT EXISTS `"+strings.ReplaceAll(db, "`", "")+"`")
	return err
}

func (s *playedServer) stop() {
	if s == nil {
		return
	}
	if s.stopFn != nil {
		s.stopFn()
		return
	}
	if s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	s.cancel()
	<-s.done
	_ = os.RemoveAll(s.dir)
}

// stopPlayed stops every played server (the executor is stopping).
func (e *Executor) stopPlayed() {
	e.mu.Lock()
	all, clusters := e.played, e.clusters
	e.played, e.clusters = map[types.UID]*playedServer{}, map[types.UID]*playedCluster{}
	e.mu.Unlock()
	for _, s := range all {
		s.stop()
	}
	for _, c := range clusters {
		c.stop()
	}
}
