package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	stats "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	contract "github.com/dbperf-io/dbperf-operator/internal/pod"
)

// maxTerminationMessage is the kubelet's limit for a termination message.
const maxTerminationMessage = 4096

type podRun struct {
	dir     string
	logPath string
	cancel  context.CancelFunc
	done    chan struct{}
	// ref, node and started describe the pod in /stats/summary; cgroup is
	// set while its process runs in a cgroup of its own (under Executor.mu).
	ref       stats.PodReference
	node      string
	container string
	image     string
	started   time.Time
	cgroup    *podCgroup
}

// notRunnable is a pod the executor cannot run here; reason and message go
// into the container's terminated state.
type notRunnable struct{ reason, message string }

func (n *notRunnable) Error() string { return n.reason + ": " + n.message }

func (e *Executor) start(ctx context.Context, pod *corev1.Pod) {
	dir := filepath.Join(e.o.WorkDir, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
	runCtx, cancel := context.WithCancel(ctx)
	r := &podRun{dir: dir, logPath: filepath.Join(dir, "container.log"), cancel: cancel, done: make(chan struct{}),
		ref:  stats.PodReference{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID)},
		node: pod.Spec.NodeName, container: pod.Spec.Containers[0].Name, image: pod.Spec.Containers[0].Image, started: time.Now()}
	e.mu.Lock()
	e.pods[pod.UID] = r
	e.mu.Unlock()
	go func() {
		defer close(r.done)
		defer cancel()
		e.run(runCtx, pod.DeepCopy(), r)
	}()
}

func (e *Executor) failOrphan(ctx context.Context, pod *corev1.Pod) {
	e.logf("pod %s/%s is Running without a process (executor restarted): failing it", pod.Namespace, pod.Name)
	now := metav1.Now()
	_ = e.updateStatus(ctx, pod, func(p *corev1.Pod) {
		terminate(p, now, now, 137, "ExecutorRestarted", "the test executor that ran this container restarted")
	})
}

func (e *Executor) run(ctx context.Context, pod *corev1.Pod, r *podRun) {
	c := pod.Spec.Containers[0]
	started := metav1.Now()
	cmd, cleanup, err := e.prepare(ctx, pod, c, r)
	defer cleanup()
	if err != nil {
		var nr *notRunnable
		if !errors.As(err, &nr) {
			nr = &notRunnable{reason: "CreateContainerError", message: err.Error()}
		}
		e.logf("pod %s/%s cannot run here: %v", pod.Namespace, pod.Name, nr)
		_ = os.WriteFile(r.logPath, []byte(nr.Error()+"\n"), 0o644)
		_ = e.updateStatus(ctx, pod, func(p *corev1.Pod) {
			terminate(p, started, metav1.Now(), 128, nr.reason, nr.message)
		})
		return
	}
	if err := e.updateStatus(ctx, pod, func(p *corev1.Pod) { markRunning(p, started) }); err != nil {
		e.logf("pod %s/%s: status Running: %v", pod.Namespace, pod.Name, err)
		return
	}
	e.logf("pod %s/%s on %s: %s", pod.Namespace, pod.Name, pod.Spec.NodeName, redactArgs(cmd.Args, cmd.Env))
	runErr := cmd.Run()
	code := 0
	reason := "Completed"
	if runErr != nil {
		var ee *exec.ExitError
		switch {
		case ctx.Err() != nil:
			code, reason = 137, "Error" // killed: pod deleted or executor stopping
		case errors.As(runErr, &ee):
			code, reason = ee.ExitCode(), "Error"
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
		default:
			code, reason = 128, "ContainerCannotRun"
		}
	}
	msg := readTerminationMessage(filepath.Join(r.dir, "termination-log"), r.logPath, c.TerminationMessagePolicy, code)
	if ctx.Err() != nil {
		return // the pod is gone (or we are stopping): nobody to report to
	}
	e.logf("pod %s/%s exited %d", pod.Namespace, pod.Name, code)
	if err := e.updateStatus(context.Background(), pod, func(p *corev1.Pod) {
		terminate(p, started, metav1.Now(), int32(code), reason, msg)
	}); err != nil {
		e.logf("pod %s/%s: status Terminated: %v", pod.Namespace, pod.Name, err)
	}
}

// prepare builds the container's process: command, environment, volumes,
// cgroup and user. cleanup removes the cgroup and the Service forwarders'
// references.
func (e *Executor) prepare(ctx context.Context, pod *corev1.Pod, c corev1.Container, r *podRun) (*exec.Cmd, func(), error) {
	cleanup := func() {}
	if err := os.MkdirAll(r.dir, 0o777); err != nil {
		return nil, cleanup, err
	}
	runnerPath := e.runnerFor(pod)
	argv := append(append([]string{}, c.Command...), c.Args...)
	if len(argv) == 0 {
		return nil, cleanup, &notRunnable{"ContainerCannotRun", "the container has no command: the executor runs dbperf-runner commands only"}
	}
	if len(argv) > 1 && argv[0] == contract.InstallerPath && argv[1] == contract.CommandStress {
		return e.prepareStress(ctx, pod, c, r, runnerPath, argv)
	}
	if filepath.Base(argv[0]) != "dbperf-runner" || len(argv) < 2 || argv[1] != "exec" {
		return nil, cleanup, &notRunnable{"ContainerCannotRun", fmt.Sprintf("command %q is not `dbperf-runner exec`: the executor runs dbperf workload containers only", argv[0])}
	}
	dash := indexOf(argv, "--")
	if dash < 0 || dash+1 >= len(argv) {
		return nil, cleanup, &notRunnable{"ContainerCannotRun", "no tool command after -- in the runner's arguments"}
	}
	tool := argv[dash+1]
	// A shell wrapper (`sh -c SCRIPT NAME ARGS…`: memtier with credentials
	// the shell assembles) runs the image's own shell; the image's tool is
	// the one the script is named for ($0).
	if filepath.Base(tool) == "sh" && dash+4 < len(argv) && argv[dash+2] == "-c" {
		tool = argv[dash+4]
	}
	repo := ImageRepository(c.Image)
	toolPath := ""
	if filepath.Base(tool) == runnerName {
		// A tool built into the runner (the query workload's client), in
		// whatever image: the runner of this build stands for it.
		toolPath = runnerPath
	}
	for _, d := range e.o.Images[repo] {
		if p := filepath.Join(d, filepath.Base(tool)); isExecutable(p) {
			toolPath = p
			break
		}
	}
	if toolPath == "" {
		return nil, cleanup, &notRunnable{"ToolNotInstalled", fmt.Sprintf(
			"image %s stands for a local installation of %s, which this machine does not have: the test executor runs real tools only", c.Image, tool)}
	}

	// Volumes: every mount becomes a directory of the pod; paths under a
	// mount point are rewritten to it.
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		host := filepath.Join(r.dir, "volumes", m.Name)
		if err := os.MkdirAll(host, 0o777); err != nil {
			return nil, cleanup, err
		}
		_ = os.Chmod(host, 0o777)
		mounts[m.MountPath] = host
		if m.MountPath == runnerDir {
			// What the init container installs there.
			if err := installRunner(runnerPath, host); err != nil {
				return nil, cleanup, err
			}
		}
	}
	if err := writeDownwardAPI(pod, filepath.Join(r.dir, "volumes")); err != nil {
		return nil, cleanup, &notRunnable{"CreateContainerConfigError", err.Error()}
	}
	imagePaths := e.o.ImagePaths[repo]
	// Paths under a mount point are rewritten to the mount's directory,
	// then paths inside the image to the local installation (whose
	// directories never lie under a mount point).
	var rewritePath func(s string) string
	rewritePath = func(s string) string {
		// An option's value names a path too: --out json=/dbperf/out/x.
		if k, v, ok := strings.Cut(s, "="); ok && strings.HasPrefix(v, "/") {
			return k + "=" + rewritePath(v)
		}
		best := ""
		for mp := range mounts {
			if (s == mp || strings.HasPrefix(s, mp+"/")) && len(mp) > len(best) {
				best = mp
			}
		}
		if best != "" {
			s = mounts[best] + strings.TrimPrefix(s, best)
		}
		for from, to := range imagePaths {
			s = strings.ReplaceAll(s, from, to)
		}
		return s
	}
	// Files of mounted ConfigMaps (a generated property file) name paths
	// inside the container too: whole paths only (/etc/dbperf/tls is not
	// /dbperf under /etc), longest mount point first.
	var pairs [][2]string
	mps := make([]string, 0, len(mounts))
	for mp := range mounts {
		mps = append(mps, mp)
	}
	sort.Slice(mps, func(i, j int) bool { return len(mps[i]) > len(mps[j]) })
	for _, mp := range mps {
		pairs = append(pairs, [2]string{mp, mounts[mp]})
	}
	for from, to := range imagePaths {
		pairs = append(pairs, [2]string{from, to})
	}
	contentReplacer := pathReplacer(pairs)
	// Service names in ConfigMap files (HammerDB's scripts name the host)
	// resolve as cluster DNS would, like those in arguments.
	var svcRefs []string
	prepared := false
	defer func() {
		if !prepared { // every Service reference taken so far goes with the error
			e.services.release(svcRefs)
		}
	}()
	var contentErr error
	rewriteContent := func(b []byte) []byte {
		out, refs, err := e.services.rewrite(ctx, contentReplacer.Replace(string(b)))
		svcRefs = append(svcRefs, refs...)
		if err != nil && contentErr == nil {
			contentErr = err
		}
		return []byte(out)
	}
	if err := e.writeConfigVolumes(ctx, pod, filepath.Join(r.dir, "volumes"), rewriteContent); err != nil {
		return nil, cleanup, &notRunnable{"CreateContainerConfigError", err.Error()}
	}
	if contentErr != nil {
		return nil, cleanup, &notRunnable{"CreateContainerConfigError", fmt.Sprintf("a ConfigMap file: %v", contentErr)}
	}
	env, err := e.resolveEnv(ctx, pod, c)
	if err != nil {
		return nil, cleanup, &notRunnable{"CreateContainerConfigError", err.Error()}
	}
	// The kubelet expands $(VAR) in the command and arguments with the
	// container's environment (a URL that carries the credentials of a
	// Secret); unknown references stay as written.
	vals := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vals[k] = v
		}
	}
	for i := range argv {
		argv[i] = expand(argv[i], vals)
	}
	rewrite := func(s string) (string, error) {
		s = rewritePath(s)
		out, refs, err := e.services.rewrite(ctx, s)
		svcRefs = append(svcRefs, refs...)
		return out, err
	}
	for i := range env {
		k, v, _ := strings.Cut(env[i], "=")
		nv, err := rewrite(v)
		if err != nil {
			return nil, cleanup, &notRunnable{"CreateContainerConfigError", fmt.Sprintf("env %s: %v", k, err)}
		}
		env[i] = k + "=" + nv
	}
	if argv, err = rewriteArgs(argv, rewrite); err != nil {
		return nil, cleanup, &notRunnable{"CreateContainerConfigError", err.Error()}
	}

	// The runner of this build stands for the installed one; its summary
	// goes where the kubelet would read the termination message.
	termPath := filepath.Join(r.dir, "termination-log")
	if err := os.WriteFile(termPath, nil, 0o666); err != nil {
		return nil, cleanup, err
	}
	_ = os.Chmod(termPath, 0o666)
	host := contract.RunnerSettings{SummaryFile: termPath}
	cg, cgErr := e.cgroups.create(string(pod.UID), c.Resources.Limits.Cpu().MilliValue(), c.Resources.Limits.Memory().Value())
	if cgErr == nil {
		host.CgroupRoot = cg.root
		e.mu.Lock()
		r.cgroup = cg
		e.mu.Unlock()
		cleanup = func() {
			e.mu.Lock()
			r.cgroup = nil
			e.mu.Unlock()
			cg.killAll() // what escaped the pod's process group ends with the pod
			cg.remove()
		}
	} else {
		e.logf("pod %s/%s: no cgroup of its own (%v): the runner measures the whole machine", pod.Namespace, pod.Name, cgErr)
	}
	argv = append(append([]string{runnerPath, contract.CommandExec}, contract.ExecCommand{Runner: host}.Flags()...), argv[2:]...)
	// The tool is looked up on PATH, as in the image.
	env = setEnv(env, "PATH", strings.Join(append(e.o.Images[repo], "/usr/local/bin", "/usr/bin", "/bin"), ":"))
	if getEnv(env, "HOME") == "" {
		env = setEnv(env, "HOME", mounts["/tmp"])
	}

	logFile, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, cleanup, err
	}
	prev := cleanup
	cleanup = func() { logFile.Close(); prev(); e.services.release(svcRefs) }

	var cmd *exec.Cmd
	prefix := []string{}
	if cg != nil {
		prefix = cg.joinCommand()
	}
	if uid, gid, ok := runAs(pod, c); ok && os.Geteuid() == 0 {
		prefix = append(prefix, "setpriv", "--reuid="+strconv.FormatInt(uid, 10), "--regid="+strconv.FormatInt(gid, 10), "--clear-groups", "--")
		_ = os.Chown(r.dir, int(uid), int(gid))
		_ = os.Chown(logFile.Name(), int(uid), int(gid))
	}
	all := append(append([]string{}, prefix...), argv...)
	cmd = exec.CommandContext(ctx, all[0], all[1:]...)
	cmd.Env = env
	// The container's workingDir, else the image's, else the pod's own
	// directory.
	cmd.Dir = r.dir
	if c.WorkingDir != "" {
		cmd.Dir = rewritePath(c.WorkingDir)
	} else if d := e.o.ImageWorkDirs[repo]; d != "" {
		cmd.Dir = d
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	prepared = true
	return cmd, cleanup, nil
}

// runnerDir is where a workload pod's init container installs the runner,
// as bin/runnerName (contract.RunnerPath).
const (
	runnerDir  = contract.RunnerDir
	runnerName = "dbperf-runner"
)

// installRunner puts the runner of this build where the pod's init
// container would have installed it, for commands that name it there: a
// hard link (the pod's user may not reach the runner's own directory),
// else a copy.
// runnerFor is the binary that stands for the pod's runner image (its init
// containers'): Options.Runners' for that image, else RunnerPath.
func (e *Executor) runnerFor(pod *corev1.Pod) string {
	for _, c := range pod.Spec.InitContainers {
		if p, ok := e.o.Runners[c.Image]; ok {
			return p
		}
	}
	return e.o.RunnerPath
}

func installRunner(runner, dir string) error {
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	dst := filepath.Join(bin, runnerName)
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	if os.Link(runner, dst) == nil {
		return nil
	}
	in, err := os.Open(runner)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func runAs(pod *corev1.Pod, c corev1.Container) (uid, gid int64, ok bool) {
	var u, g *int64
	if sc := pod.Spec.SecurityContext; sc != nil {
		u, g = sc.RunAsUser, sc.RunAsGroup
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			u = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			g = sc.RunAsGroup
		}
	}
	if u == nil {
		return 0, 0, false
	}
	if g == nil {
		g = u
	}
	return *u, *g, true
}

// readTerminationMessage reads what the kubelet would put into the
// container's terminated state: the file, else (FallbackToLogsOnError, on
// failure) the end of the log; at most 4096 bytes.
func readTerminationMessage(path, logPath string, policy corev1.TerminationMessagePolicy, code int) string {
	raw, _ := os.ReadFile(path)
	if len(raw) == 0 && policy == corev1.TerminationMessageFallbackToLogsOnError && code != 0 {
		raw, _ = os.ReadFile(logPath)
		if len(raw) > 2048 {
			raw = raw[len(raw)-2048:]
		}
	}
	if len(raw) > maxTerminationMessage {
		raw = raw[:maxTerminationMessage]
	}
	return string(raw)
}

func (e *Executor) updateStatus(ctx context.Context, pod *corev1.Pod, mutate func(*corev1.Pod)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := e.o.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID != pod.UID {
			return apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)
		}
		mutate(cur)
		_, err = e.o.Client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

func setCondition(p *corev1.Pod, t corev1.PodConditionType, s corev1.ConditionStatus, now metav1.Time, reason string) {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			if p.Status.Conditions[i].Status != s {
				p.Status.Conditions[i].LastTransitionTime = now
			}
			p.Status.Conditions[i].Status, p.Status.Conditions[i].Reason = s, reason
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: s, LastTransitionTime: now, Reason: reason})
}

func initDone(p *corev1.Pod, now metav1.Time) {
	p.Status.InitContainerStatuses = nil
	for _, ic := range p.Spec.InitContainers {
		// The init container installs the runner; the executor's runner
		// stands for it.
		p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, corev1.ContainerStatus{
			Name: ic.Name, Image: ic.Image, ImageID: "local://" + ic.Image, Ready: true,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}},
		})
	}
}

func markRunning(p *corev1.Pod, now metav1.Time) {
	p.Status.Phase = corev1.PodRunning
	p.Status.HostIP, p.Status.PodIP = "127.0.0.1", "127.0.0.1"
	p.Status.HostIPs = []corev1.HostIP{{IP: "127.0.0.1"}}
	p.Status.PodIPs = []corev1.PodIP{{IP: "127.0.0.1"}}
	p.Status.StartTime = &now
	initDone(p, now)
	t := true
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "local://" + c.Image, Ready: true, Started: &t,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	for _, ct := range []corev1.PodConditionType{corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady} {
		setCondition(p, ct, corev1.ConditionTrue, now, "")
	}
}

func terminate(p *corev1.Pod, started, now metav1.Time, code int32, reason, msg string) {
	if p.Status.StartTime == nil {
		p.Status.StartTime = &started
	}
	if p.Status.HostIP == "" {
		p.Status.HostIP = "127.0.0.1"
	}
	initDone(p, started)
	f := false
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "local://" + c.Image, Ready: false, Started: &f,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: reason, Message: msg, StartedAt: started, FinishedAt: now}},
		})
	}
	p.Status.Phase = corev1.PodSucceeded
	if code != 0 {
		p.Status.Phase = corev1.PodFailed
	}
	setCondition(p, corev1.PodInitialized, corev1.ConditionTrue, now, "")
	setCondition(p, corev1.PodReady, corev1.ConditionFalse, now, "PodCompleted")
	setCondition(p, corev1.ContainersReady, corev1.ConditionFalse, now, "PodCompleted")
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

func getEnv(env []string, k string) string {
	for _, kv := range env {
		if key, v, _ := strings.Cut(kv, "="); key == k {
			return v
		}
	}
	return ""
}

func setEnv(env []string, k, v string) []string {
	for i, kv := range env {
		if key, _, _ := strings.Cut(kv, "="); key == k {
			env[i] = k + "=" + v
			return env
		}
	}
	return append(env, k+"="+v)
}

// redactArgs is a command line for the log with the values of the
// variables the runner is told to redact (--redact-env NAME: a Secret's)
// masked, as the $(VAR) expansion may have put them in an argument.
func redactArgs(args, env []string) string {
	line := strings.Join(args, " ")
	for i := 0; i+1 < len(args); i++ {
		if args[i] != "--redact-env" {
			continue
		}
		if v := getEnv(env, args[i+1]); len(v) >= 4 {
			line = strings.ReplaceAll(line, v, "[redacted]")
		}
	}
	return line
}

// pathReplacer replaces whole paths: a pair's path where it starts a path
// (at the start or after a character that cannot be in one) and ends one
// (at the end, a "/" or a character that cannot be in one).
type pathReplacer [][2]string

func inPath(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.-/", c) >= 0
}

// Replace rewrites s.
func (r pathReplacer) Replace(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '/' && (i == 0 || !inPath(s[i-1])) {
			done := false
			for _, p := range r {
				end := i + len(p[0])
				if strings.HasPrefix(s[i:], p[0]) && (end == len(s) || s[end] == '/' || !inPath(s[end])) {
					b.WriteString(p[1])
					i, done = end, true
					break
				}
			}
			if done {
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// keepTLSName keeps, for the runner's TLS clients (the statistics poller,
// the session check), the Service name a TLS server's certificate is
// checked against: the executor stands for cluster DNS by rewriting Service
// names to loopback addresses, which the certificate does not name.
func keepTLSName(argv []string) []string {
	for _, c := range tlsClients {
		argv = keepTLSNameOf(argv, c.tls, c.address, c.name)
	}
	return argv
}

// tlsClients are the runner's TLS clients: the flag that turns TLS on,
// the one with the server's address, the one with the name to check.
var tlsClients = []struct{ tls, address, name string }{
	{"--server-tls", "--server-address", "--server-tls-name"},
	{"--session-tls", "--session-check", "--session-tls-name"},
}

// rewriteArgs rewrites the arguments after the command (paths, Service
// names to loopback addresses), keeping first the names TLS clients check
// certificates against (keepTLSName), which are not rewritten.
func rewriteArgs(argv []string, rewrite func(string) (string, error)) ([]string, error) {
	argv = keepTLSName(argv)
	for i := 1; i < len(argv); i++ {
		if isTLSNameFlag(argv[i-1]) {
			continue
		}
		var err error
		if argv[i], err = rewrite(argv[i]); err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
	}
	return argv, nil
}

// isTLSNameFlag says whether arg is the flag of a TLS client's server name.
func isTLSNameFlag(arg string) bool {
	for _, c := range tlsClients {
		if arg == c.name {
			return true
		}
	}
	return false
}

func keepTLSNameOf(argv []string, tlsFlag, addressFlag, nameFlag string) []string {
	if indexOf(argv, tlsFlag) < 0 || indexOf(argv, nameFlag) >= 0 {
		return argv
	}
	i := indexOf(argv, addressFlag)
	if i < 0 || i+1 >= len(argv) {
		return argv
	}
	host, _, err := net.SplitHostPort(argv[i+1])
	if err != nil || !serviceName.MatchString(host) {
		return argv
	}
	out := append([]string{}, argv[:i+2]...)
	out = append(out, nameFlag, host)
	return append(out, argv[i+2:]...)
}

// prepareStress builds a noisy neighbour's stress pod's process: the
// runner of this build's `stress`, its scratch volume a directory of the
// pod, its report where the kubelet reads the termination message, in a
// cgroup of its own with the container's limits where it can, as the
// pod's user.
func (e *Executor) prepareStress(ctx context.Context, pod *corev1.Pod, c corev1.Container, r *podRun, runnerPath string, argv []string) (*exec.Cmd, func(), error) {
	cleanup := func() {}
	cmd, err := contract.ParseStress(argv[2:], io.Discard)
	if err != nil {
		return nil, cleanup, &notRunnable{"ContainerCannotRun", fmt.Sprintf("stress arguments %q: %v", argv[2:], err)}
	}
	for _, m := range c.VolumeMounts {
		host := filepath.Join(r.dir, "volumes", m.Name)
		if err := os.MkdirAll(host, 0o777); err != nil {
			return nil, cleanup, err
		}
		_ = os.Chmod(host, 0o777)
		if m.MountPath == cmd.Dir {
			cmd.Dir = host
		}
	}
	cmd.SummaryFile = filepath.Join(r.dir, "termination-log")
	if err := os.WriteFile(cmd.SummaryFile, nil, 0o666); err != nil {
		return nil, cleanup, err
	}
	_ = os.Chmod(cmd.SummaryFile, 0o666)
	args := append([]string{runnerPath}, cmd.Args()[1:]...)
	var prefix []string
	if cg, err := e.cgroups.create(string(pod.UID), c.Resources.Limits.Cpu().MilliValue(), c.Resources.Limits.Memory().Value()); err == nil {
		e.mu.Lock()
		r.cgroup = cg
		e.mu.Unlock()
		prefix = cg.joinCommand()
		cleanup = func() {
			e.mu.Lock()
			r.cgroup = nil
			e.mu.Unlock()
			cg.killAll()
			cg.remove()
		}
	}
	if uid, gid, ok := runAs(pod, c); ok && os.Geteuid() == 0 {
		prefix = append(prefix, "setpriv", "--reuid="+strconv.FormatInt(uid, 10), "--regid="+strconv.FormatInt(gid, 10), "--clear-groups", "--")
		_ = os.Chown(r.dir, int(uid), int(gid))
		_ = filepath.Walk(filepath.Join(r.dir, "volumes"), func(p string, _ os.FileInfo, _ error) error { return os.Chown(p, int(uid), int(gid)) })
	}
	logFile, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, cleanup, err
	}
	prev := cleanup
	cleanup = func() { logFile.Close(); prev() }
	all := append(append([]string{}, prefix...), args...)
	proc := exec.CommandContext(ctx, all[0], all[1:]...)
	proc.Dir, proc.Stdout, proc.Stderr = r.dir, logFile, logFile
	proc.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The kubelet stops a deleted pod's container with SIGTERM first.
	proc.Cancel = func() error { return syscall.Kill(-proc.Process.Pid, syscall.SIGTERM) }
	proc.WaitDelay = 5 * time.Second
	return proc, cleanup, nil
}
