package sim

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	stats "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/kubelet"
	"github.com/dbperf-io/dbperf-operator/test/executor"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// TestKubeletSourceSeesTheTargetServer: a simulated target pod whose
// Service's backend is a real redis-server under redis-benchmark load. The
// executor moves the server into the pod's cgroup; the kubelet source reads
// the node's /stats/summary from the test kubelet through the API server's
// node proxy; the pod's cpuCores must
// agree with the server's own CPU time from /proc within 20 %.
func TestKubeletSourceSeesTheTargetServer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the executor moves the server into a pod cgroup")
	}
	server, err1 := localdb.Tool("redis-server")
	bench, err2 := localdb.Tool("redis-benchmark")
	if err1 != nil || err2 != nil {
		t.Skipf("needs redis-server and redis-benchmark (hack/install-deps.sh): %v %v", err1, err2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Name: "sim-kubelet", BinDir: binDirForTest(t), Dir: t.TempDir(), Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	pool := Pool{Name: "db", Nodes: 1, InstanceType: "local", CPUModel: "local", Arch: "amd64",
		CPU: strconv.Itoa(runtime.NumCPU()), Memory: "8Gi", Zones: []string{"zone-a"}, Kernel: "local", OSImage: "local"}
	if err := c.CreateNodes(ctx, []Pool{pool}); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	work, err := os.MkdirTemp("", "dbperf-kubelet-test-") // searchable by others, as the executor wants
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(work)
	_ = os.Chmod(work, 0o755)
	ex, err := executor.New(executor.Options{Client: c.Clientset, RunnerPath: self, WorkDir: work,
		KubeletAddr: c.KubeletAddr(), Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	exCtx, exStop := context.WithCancel(ctx)
	exDone := make(chan struct{})
	go func() { _ = ex.Run(exCtx); close(exDone) }()
	defer func() { exStop(); <-exDone }()

	port, err := localdb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	redis := exec.Command(server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := redis.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = redis.Process.Kill(); _ = redis.Wait() }()
	if err := localdb.WaitForPort(port, 10*time.Second); err != nil {
		t.Fatal(err)
	}

	ns := "default"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: ns, Labels: map[string]string{"app": "db"}},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{PoolLabel: "db"}, Containers: []corev1.Container{{Name: "redis", Image: "redis"}}}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns,
		Annotations: map[string]string{executor.BackendAnnotation: fmt.Sprintf("127.0.0.1:%d", port)}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "db"}, Ports: []corev1.ServicePort{{Name: "redis", Port: 6379}}}}
	if _, err := c.Clientset.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Clientset.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	node := NodeName("db", 0)
	// Through the API server's node proxy, as the operator reads it: the
	// nodes' address is a private one on lo (nodeaddr.go), which the proxy
	// accepts where it refuses 127.0.0.1.
	var api kubelet.Kubelets = kubelet.NewAPIServer(c.Clientset)
	if c.NodeAddr == loopbackNodeAddr {
		t.Log("the nodes kept 127.0.0.1 (see the log): the sampler reads the test kubelet directly, as the node proxy would")
		api = directKubelet{c.KubeletAddr()}
	}
	err = testutil.Poll(ctx, time.Minute, 200*time.Millisecond, "the server in the target pod's cgroup", func() error {
		s, err := api.Summary(ctx, node)
		if err != nil {
			return err // the executor's endpoint may not listen yet
		}
		for _, p := range s.Pods {
			if p.PodRef.Name == "db-0" && p.CPU != nil {
				return nil
			}
		}
		return fmt.Errorf("no CPU of db-0 among %d pods", len(s.Pods))
	})
	if err != nil {
		t.Fatal(err)
	}

	load := exec.CommandContext(ctx, bench, "-p", strconv.Itoa(port), "-n", "100000000", "-c", "8", "-P", "4", "-t", "set,get", "-q")
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = load.Process.Kill(); _ = load.Wait() }()
	time.Sleep(time.Second)

	capacity, err := kubelet.NodeCPUCores(ctx, c.Clientset, []string{node})
	if err != nil {
		t.Fatal(err)
	}
	s, err := kubelet.NewSampler(api, kubelet.Config{Interval: time.Second}, kubelet.Subjects{
		Pods:  []kubelet.Pod{{Namespace: ns, Name: "db-0", Role: telemetry.RoleTarget, Node: node}},
		Nodes: []kubelet.Node{{Name: node, CPUCores: capacity[node]}}})
	if err != nil {
		t.Fatal(err)
	}
	window := testutil.StartCPUWindow(t, redis.Process.Pid)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(8 * time.Second)
	rep := s.Stop(ctx)
	want := window.Stop(t)
	got := map[string]float64{}
	for _, f := range rep.Figures {
		got[f.Name+"["+f.Subject+"]"] = f.Value
	}
	t.Logf("figures %v; warnings %q", got, rep.Warnings)
	cores := got["cpuCores[target/db-0]"]
	if want < 0.1 {
		t.Fatalf("redis-server used %.3f cores under load: the load did not run", want)
	}
	testutil.AgreesWithin(t, "target pod cpuCores from the test kubelet against redis-server's", cores, want, 0.2)
	if got["memoryWorkingSetBytesMax[target/db-0]"] <= 0 {
		t.Error("no working set for the target pod")
	}
	if got["cpuBusyPercent[node/"+node+"]"] <= 0 {
		t.Error("no cpuBusyPercent for the node")
	}
	// On a loaded machine a read may miss its half-interval deadline (the
	// sampler says so and measures across it); anything else is an error.
	for _, w := range rep.Warnings {
		if !strings.Contains(w, "reads of its kubelet's statistics failed") || !strings.Contains(w, "deadline exceeded") {
			t.Errorf("warning: %q", w)
		}
	}
}

// directKubelet reads the test kubelet's HTTPS endpoint (its throwaway
// certificate is not verified, as the API server does not verify it).
type directKubelet struct{ addr string }

func (d directKubelet) Summary(ctx context.Context, _ string) (*stats.Summary, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+d.addr+"/stats/summary", nil)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test kubelet's throwaway certificate
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	var s stats.Summary
	return &s, json.NewDecoder(resp.Body).Decode(&s)
}
