package executor

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	stats "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/kubelet"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// directKubelet reads the test kubelet's HTTPS endpoint without the API
// server, as the node proxy would.
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

// TestSummaryAgreesWithProc runs a real CPU burner (limited to half a core,
// holding 64 MiB) in a pod cgroup, samples the executor's /stats/summary
// over HTTPS with the kubelet source's sampler, and compares its cpuCores
// with the burner's own CPU time from /proc over the same window.
func TestSummaryAgreesWithProc(t *testing.T) {
	e, cmd := startBurnerPod(t)
	port, err := localdb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	srv, err := e.serveLogs(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	time.Sleep(time.Second) // the burner's page touching is over

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pod := kubelet.Pod{Namespace: "ns", Name: "burner", Role: telemetry.RoleTarget, Node: "n1", CPULimitCores: 0.5}
	s, err := kubelet.NewSampler(directKubelet{addr}, kubelet.Config{Interval: time.Second},
		kubelet.Subjects{Pods: []kubelet.Pod{pod}, Nodes: []kubelet.Node{{Name: "n1", CPUCores: float64(runtime.NumCPU())}}})
	if err != nil {
		t.Fatal(err)
	}
	procs := testutil.StartProcSampler(t, 100*time.Millisecond, cmd.Process.Pid)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The window ends once the burner has used 4 CPU-seconds since the
	// sampler started (8 s at its half-core limit, longer on a loaded
	// machine): enough readings for the comparison. Polled with a deadline.
	cpu0 := testutil.MustProcessCPUSeconds(t, cmd.Process.Pid)
	if err := testutil.Poll(ctx, 25*time.Second, 200*time.Millisecond, "the burner's 4 CPU-seconds", func() error {
		used, err := testutil.ProcessCPUSeconds(cmd.Process.Pid)
		if err != nil {
			return err
		}
		if used-cpu0 < 4 {
			return fmt.Errorf("%.2f CPU-seconds", used-cpu0)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rep := s.Stop(ctx)

	got := map[string]float64{}
	for _, f := range rep.Figures {
		got[f.Name+"["+f.Subject+"]"] = f.Value
	}
	t.Logf("figures %v; warnings %q", got, rep.Warnings)
	cores := got["cpuCores[target/burner]"]
	// The burner's rate moves with the machine's load, so /proc is read over
	// the sampler's own window: its series' first and last readings. The
	// kubelet stamps a statistic to the second (metav1.Time), so each stamp
	// stands for the second after it: /proc is read at its middle.
	var series []telemetry.Sample
	for _, sr := range rep.Series {
		if sr.Name == "cpuCores" && sr.Subject == "target/burner" {
			series = sr.Samples
		}
	}
	if len(series) < 5 {
		t.Fatalf("%d cpuCores readings of the burner over 4 CPU-seconds of 1-s polls", len(series))
	}
	from, to := series[0].Time, series[len(series)-1].Time
	var used float64
	for i := 1; i < len(series); i++ {
		used += series[i].Value * series[i].Time.Sub(series[i-1].Time).Seconds()
	}
	half := 500 * time.Millisecond
	var want float64
	if err := testutil.Poll(ctx, 3*time.Second, 100*time.Millisecond, "/proc sampled past the last reading", func() error {
		var ok bool
		if want, ok = procs.ProcessCores(cmd.Process.Pid, from.Add(half), to.Add(half)); !ok {
			return fmt.Errorf("not sampled over %s-%s", from.Add(half), to.Add(half))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want < 0.2 {
		t.Fatalf("the burner used %.3f cores: it did not run", want)
	}
	testutil.AgreesWithin(t, "cpuCores over the series' window", used/to.Sub(from).Seconds(), want, 0.2)
	// Its limit is half a core; on a loaded machine it may get less, so the
	// percent is checked against the cores it got, and against the limit.
	if p := got["cpuLimitPercent[target/burner]"]; p > 120 || math.Abs(p-100*cores/0.5) > 1 {
		t.Errorf("cpuLimitPercent %.1f, want %.1f (%.4f cores of a half-core limit), at most about 100", p, 100*cores/0.5, cores)
	}
	if ws := got["memoryWorkingSetBytesMax[target/burner]"]; ws < 64<<20 || ws > 256<<20 {
		t.Errorf("memoryWorkingSetBytesMax %.0f, want 64-256 MiB (the burner holds 64 MiB)", ws)
	}
	if b := got["cpuBusyPercent[node/n1]"]; b < 100*want/float64(runtime.NumCPU())*0.8 {
		t.Errorf("node cpuBusyPercent %.1f is below the burner's own share of the machine", b)
	}
	if len(rep.Warnings) > 0 {
		t.Errorf("warnings: %q", rep.Warnings)
	}
}

// startBurnerPod runs a real CPU burner (limited to half a core, holding
// 64 MiB) as pod ns/burner on node n1 of an executor that serves nothing
// yet; it stops with the test.
func startBurnerPod(t *testing.T) (*Executor, *exec.Cmd) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create pod cgroups (the test kubelet reads their counters)")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3 for the burner (a busy loop holding 64 MiB)")
	}
	e := &Executor{o: Options{WorkDir: t.TempDir()}, pods: map[types.UID]*podRun{}, cgroups: newCgroupManager()}
	if e.cgroups.err != nil {
		t.Skipf("no pod cgroups here: %v", e.cgroups.err)
	}
	uid := fmt.Sprintf("stats-test-%d-%s", os.Getpid(), t.Name())
	cg, err := e.cgroups.create(uid, 500, 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	burn := `b = bytearray(64 << 20)
for i in range(0, len(b), 4096): b[i] = 1
while True: pass`
	argv := append(cg.joinCommand(), python, "-c", burn)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		for i := 0; i < 50; i++ { // the kernel refuses rmdir until the process has left
			cg.remove()
			if _, err := os.Stat(cg.cpuDir); os.IsNotExist(err) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	e.pods[types.UID(uid)] = &podRun{ref: stats.PodReference{Namespace: "ns", Name: "burner", UID: uid}, node: "n1",
		container: "tool", image: "python:3", started: time.Now(), cgroup: cg}
	return e, cmd
}
