package controllers

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// kubeletRealTool plays a node that runs the Job's real tool (redis-benchmark
// against the local redis-server standing in for the target) through the
// runner with the statistics poller the Job's arguments ask for, pointed at
// the local server.
func (h *harness) kubeletRealTool(job *batchv1.Job, node, workload string, server int, command ...string) *results.Result {
	h.T.Helper()
	args := job.Spec.Template.Spec.Containers[0].Args
	exec, err := pod.ParseExec(args[1:], io.Discard)
	if err != nil || !exec.Statistics.Enabled() {
		h.T.Fatalf("the job does not poll the server's statistics: %v (%v)", args, err)
	}
	return h.ReplayWith(job, node, workload, runner.Options{Command: command,
		ServerStatistics: &runner.ServerStatistics{Protocol: exec.Statistics.Protocol, Config: dbstats.Config{Host: "127.0.0.1", Port: server}, Interval: 300 * time.Millisecond},
	})
}

// TestTargetTelemetryAndDisturbances: a Valkey target's Jobs ask the runner
// to poll the server's INFO; a real redis-benchmark against a real
// redis-server gives the server's CPU, which status keeps beside the
// throughput (with the efficiency and the CPU's share of the target's
// limit), and the printer column shows. A target pod OOM-killed in the
// middle of the second measurement makes that repetition Invalid naming
// the pod and the reason; the first stays valid.
func TestTargetTelemetryAndDisturbances(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	node := h.LoadgenNode()
	rd := testutil.StartRedis(t)
	run := &benchv1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "tele"},
		Spec: benchv1.BenchmarkRunSpec{
			Repetitions: 2,
			Target: benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{ServerTarget: benchv1.ServerTarget{
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}},
			}}},
			Workload:  benchv1.WorkloadSpec{RedisBenchmark: &benchv1.RedisBenchmarkWorkload{Tests: []string{"set"}, Clients: []int32{10}}},
			Validity:  benchv1.ValiditySpec{MaxLoadGeneratorCPUPercent: 100, MaxTargetCPUPercent: 90},
			Telemetry: benchv1.TelemetrySpec{PollInterval: &metav1.Duration{Duration: 2 * time.Second}},
			// redis-benchmark gives no histogram: APDEX is a warning, not a number.
			APDEX: []benchv1.APDEXTarget{{Operation: "SET", Target: metav1.Duration{Duration: time.Millisecond}}},
		},
	}
	h.Create(run)
	markServerReady(t, h, specs.ValkeyName(run))
	run = h.Run("tele")
	// The target's pod, as the StatefulSet controller would make it.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: specs.ValkeyName(run) + "-0", Namespace: h.NS, Labels: specs.ServerPodLabels(run)},
		Spec: corev1.PodSpec{NodeName: "db-1", Containers: []corev1.Container{{Name: "valkey", Image: "valkey/valkey:8.1",
			Resources: run.Spec.Target.Valkey.Resources}}},
	}
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	tool := []string{"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "-c", "10", "-n", "60000", "-t", "set", "--csv"}

	job := h.WaitJob(specs.MeasureJobName(run, 0, 1))
	// The status read before the Job existed may not name the target yet
	// (it failed here once in CI, under load).
	testutil.Eventually(t, 30*time.Second, "the status names the target", func() error {
		if run = h.Run("tele"); run.Status.Target == nil {
			return fmt.Errorf("no status.target yet")
		}
		return nil
	})
	args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "--server-statistics redis --server-address "+run.Status.Target.Host+":6379") || !strings.Contains(args, "--server-poll-interval 2s") {
		t.Fatalf("the job's runner arguments do not poll the target: %s", args)
	}
	first := h.kubeletRealTool(job, node, "redis-benchmark", rd.Port, tool...)
	if first.Verdict != results.Succeeded {
		t.Fatalf("first measurement %s: %v", first.Verdict, first.Reasons)
	}

	// The server's container is OOM-killed and restarted while the second
	// measurement runs.
	job = h.WaitJob(specs.MeasureJobName(run, 0, 2))
	killed := make(chan error, 1)
	go func() {
		time.Sleep(700 * time.Millisecond) // the tool is under way
		started := metav1.NewTime(time.Now().Add(-10 * time.Minute))
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "valkey", RestartCount: 1, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "OOMKilled", StartedAt: started, FinishedAt: metav1.Now()}},
		}}}
		killed <- k8s.Status().Update(ctx, pod)
	}()
	h.kubeletRealTool(job, node, "redis-benchmark", rd.Port, append(tool[:7:7], "-n", "120000", "-t", "set", "--csv")...)
	if err := <-killed; err != nil {
		t.Fatal(err)
	}

	run = h.WaitPhase("tele", 30*time.Second, benchv1.PhaseInvalid)
	reps := run.Status.Steps[0].Repetitions
	if len(reps) != 2 || reps[0].Verdict != benchv1.VerdictSucceeded || reps[1].Verdict != benchv1.VerdictInvalid {
		t.Fatalf("repetitions %+v", reps)
	}
	why := strings.Join(reps[1].Reasons, "; ")
	if !strings.Contains(why, "target pod "+pod.Name) || !strings.Contains(why, "OOMKilled") || !strings.Contains(why, "exit code 137") {
		t.Errorf("the invalid repetition does not name the pod and the kill: %s", why)
	}
	status := map[string]benchv1.MetricValue{}
	for _, m := range reps[0].Metrics {
		status[m.Name+"["+m.Operation+"]"] = m
	}
	cpu, eff, pct := status["serverCPUCores[server]"], status[telemetry.FigureEfficiency+"[target]"], status["cpuLimitPercent[target]"]
	ops := status["opsPerSecond[SET]"]
	t.Logf("status of the first measurement: %v ops/s at %v server cores (%v %% of the 4-core limit), %v per core",
		ops.Value, cpu.Value, pct.Value, eff.Value)
	if cpu.Source != "redis" || cpu.Value <= 0 || eff.Value <= 0 || pct.Value != 100*cpu.Value/4 || ops.Value <= 0 {
		t.Errorf("status lacks the server's side: %+v", reps[0].Metrics)
	}
	if p := run.Status.Primary; p == nil || p.TargetCPUCores == nil || p.EfficiencyPerTargetCore == nil || *p.TargetCPUCores <= 0 {
		t.Errorf("primary %+v lacks the target's CPU", p)
	}
	doc := h.ResultsDocument(t, run)
	full := doc.Steps[0].Repetitions[0].Result
	if full == nil || len(full.Series) == 0 {
		t.Fatalf("the results document has no telemetry series: %+v", full)
	}
	if w := strings.Join(full.Warnings, "; "); !strings.Contains(w, "APDEX of SET cannot be computed: redis-benchmark gave no latency histogram") {
		t.Errorf("no APDEX warning for a tool without histograms: %q", full.Warnings)
	}
}

// TestJudgeTargetCPU: the target's CPU as a percent of its limit, judged
// against validity.maxTargetCPUPercent, with the figures in the reason;
// without a CPU figure or a limit it is a warning that says which.
func TestJudgeTargetCPU(t *testing.T) {
	withCPU := func(name, op string, v float64) *results.Result {
		r := results.New("tool")
		r.Add(results.Metric{Name: name, Operation: op, Value: v, Unit: "cores", Source: "src"})
		return r
	}
	cases := map[string]struct {
		res     *results.Result
		limit   float64
		max     benchv1.Percent
		invalid bool
		warn    string
	}{
		"pods' CPU over the threshold": {res: withCPU("cpuCores", "target", 3.6), limit: 4, max: 75, invalid: true},
		"server's CPU under it":        {res: withCPU("serverCPUCores", "server", 0.9), limit: 4, max: 75},
		"no limit":                     {res: withCPU("cpuCores", "target", 3.6), max: 75, warn: "has no limit"},
		"no CPU":                       {res: results.New("tool"), limit: 4, max: 75, warn: "no telemetry source"},
		"not asked":                    {res: withCPU("cpuCores", "target", 3.9), limit: 4},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			run := &benchv1.BenchmarkRun{Spec: benchv1.BenchmarkRunSpec{Validity: benchv1.ValiditySpec{MaxTargetCPUPercent: tc.max}}}
			judgeTargetCPU(run, tc.res, tc.limit)
			if got := tc.res.Verdict == results.Invalid; got != tc.invalid {
				t.Errorf("invalid %v, want %v: %v", got, tc.invalid, tc.res.Reasons)
			}
			if tc.invalid && !strings.Contains(tc.res.Reasons[0], "90.0% of its limit") {
				t.Errorf("the reason lacks the figures: %v", tc.res.Reasons)
			}
			if w := strings.Join(tc.res.Warnings, "; "); !strings.Contains(w, tc.warn) || (tc.warn == "" && w != "") {
				t.Errorf("warnings %q, want %q", w, tc.warn)
			}
		})
	}
}

// TestJudgeTargetCPUP95: targetCPUStatistic P95 judges the 95th
// percentile of the target's CPU series against maxTargetCPUPercent, in
// percent of what the mean is a percent of (here a database host's 4
// cores): a mean of 50 % with peaks at 95 % breaks 90 as P95, not as
// Mean; without a series the mean is judged and a warning says so.
func TestJudgeTargetCPUP95(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	result := func(series bool) *results.Result {
		r := results.New("tool")
		r.Add(results.Metric{Name: telemetry.FigureCPUCores, Operation: "target", Value: 2, Unit: "cores", Source: telemetry.SourceHosts})
		r.Add(results.Metric{Name: telemetry.FigureCPULimitPercent, Operation: "target", Value: 50, Unit: "%", Source: telemetry.SourceHosts})
		if series {
			s := results.Series{Name: telemetry.FigureCPUCores, Subject: "target", Unit: "cores", Source: telemetry.SourceHosts}
			for i, v := range []float64{1, 1, 1.2, 1.4, 1.5, 1.6, 1.8, 1.9, 2, 2, 2.2, 2.4, 2.6, 2.8, 3, 3.2, 3.4, 3.6, 3.8, 3.8} {
				s.Samples = append(s.Samples, results.Sample{Time: t0.Add(time.Duration(i) * time.Second), Value: v})
			}
			r.Series = append(r.Series, s)
		}
		return r
	}
	for name, tc := range map[string]struct {
		stat    benchv1.TargetCPUStatistic
		series  bool
		invalid string
		warn    string
	}{
		"P95 breaks":         {stat: benchv1.TargetCPUP95, series: true, invalid: "the p95 of its CPU was 95.0% of its hosts' cores over 20 samples (mean 50.0%)"},
		"Mean holds":         {stat: benchv1.TargetCPUMean, series: true},
		"P95 without series": {stat: benchv1.TargetCPUP95, warn: "validity.maxTargetCPUPercent (P95) was not judged: no series"},
	} {
		t.Run(name, func(t *testing.T) {
			res := result(tc.series)
			run := &benchv1.BenchmarkRun{Spec: benchv1.BenchmarkRunSpec{Validity: benchv1.ValiditySpec{MaxTargetCPUPercent: 90, TargetCPUStatistic: tc.stat}}}
			judgeTargetCPU(run, res, 0)
			why := strings.Join(res.Reasons, "; ")
			if (tc.invalid != "") != (res.Verdict == results.Invalid) || !strings.Contains(why, tc.invalid) {
				t.Errorf("verdict %s %q, want invalid %q", res.Verdict, why, tc.invalid)
			}
			if w := strings.Join(res.Warnings, "; "); !strings.Contains(w, tc.warn) || (tc.warn == "" && w != "") {
				t.Errorf("warnings %q, want %q", w, tc.warn)
			}
		})
	}
}

// TestDisturbances: what counts as a disturbance of a target pod over a
// window, and what does not.
func TestDisturbances(t *testing.T) {
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	end := start.Add(5 * time.Minute)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(start.Add(d)) }
	pod := func(created time.Duration, cs ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", CreationTimestamp: at(created)},
			Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{ContainerStatuses: cs}}
	}
	ended := func(when time.Duration, reason string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "db", RestartCount: 1, LastTerminationState: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{FinishedAt: at(when), Reason: reason, ExitCode: 137}}}
	}
	cases := map[string]struct {
		pod  *corev1.Pod
		want string
	}{
		"steady":                      {pod(-time.Hour), ""},
		"a restart before the window": {pod(-time.Hour, ended(-time.Minute, "Error")), ""},
		"OOM-killed inside":           {pod(-time.Hour, ended(2*time.Minute, "OOMKilled")), "OOMKilled"},
		"killed just after the end":   {pod(-time.Hour, ended(5*time.Minute+10*time.Second, "Error")), "Error"},
		"recreated inside":            {pod(time.Minute), "recreated or rescheduled to node n1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := strings.Join(disturbances(tc.pod, start, end), "; ")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("disturbances %q, want %q", got, tc.want)
			}
		})
	}
}

// TestJudgeTargetMemory: a target pod's peak working set against its memory
// limit and validity.maxTargetMemoryPercent.
func TestJudgeTargetMemory(t *testing.T) {
	withWS := func(v float64) *results.Result {
		r := results.New("tool")
		r.Add(results.Metric{Name: "memoryWorkingSetBytesMax", Operation: "target/db-0", Value: v, Unit: "bytes", Source: "kubelet"})
		return r
	}
	cases := map[string]struct {
		res     *results.Result
		limit   float64
		max     benchv1.Percent
		pct     float64 // recorded memoryLimitPercentMax; 0: none
		invalid bool
	}{
		"near the limit":        {res: withWS(3.8e9), limit: 4e9, max: 90, pct: 95, invalid: true},
		"well under":            {res: withWS(2e9), limit: 4e9, max: 90, pct: 50},
		"no limit on the pod":   {res: withWS(3.8e9), max: 90},
		"not asked":             {res: withWS(3.9e9), limit: 4e9, pct: 97.5},
		"no resource telemetry": {res: results.New("tool"), limit: 4e9, max: 90},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			run := &benchv1.BenchmarkRun{Spec: benchv1.BenchmarkRunSpec{Validity: benchv1.ValiditySpec{MaxTargetMemoryPercent: tc.max}}}
			judgeTargetMemory(run, tc.res, "db-0", tc.limit)
			if got := tc.res.Verdict == results.Invalid; got != tc.invalid {
				t.Errorf("invalid %v, want %v: %v", got, tc.invalid, tc.res.Reasons)
			}
			m, ok := tc.res.Get(results.Key{Name: "memoryLimitPercentMax", Operation: "target/db-0"})
			if (tc.pct > 0) != ok || (ok && m.Value != tc.pct) {
				t.Errorf("memoryLimitPercentMax %+v (%v), want %v", m, ok, tc.pct)
			}
			if tc.invalid && !strings.Contains(tc.res.Reasons[0], "target pod db-0") {
				t.Errorf("the reason does not name the pod: %v", tc.res.Reasons)
			}
		})
	}
}

// TestCrossingMaxTargetCPUPercentInvalidates: a Valkey target limited to a
// tenth of a core, played by a real redis-server under a real
// redis-benchmark, uses several times its limit by the server's own count:
// the measurement is Invalid, and the reason gives the percent of the
// limit, the cores and the threshold.
func TestCrossingMaxTargetCPUPercentInvalidates(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	node := h.LoadgenNode()
	rd := testutil.StartRedis(t)
	run := &benchv1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "hot"},
		Spec: benchv1.BenchmarkRunSpec{
			Target: benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{ServerTarget: benchv1.ServerTarget{
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			}}},
			Workload: benchv1.WorkloadSpec{RedisBenchmark: &benchv1.RedisBenchmarkWorkload{Tests: []string{"set"}, Clients: []int32{10}}},
			Validity: benchv1.ValiditySpec{MaxLoadGeneratorCPUPercent: 100, MaxTargetCPUPercent: 75,
				// A rule over the server's series: redis-benchmark's 10
				// clients are connected through the measurement.
				Rules: []benchv1.SeriesRule{{Name: "clients", Series: "connectedClients", Subject: "server", Condition: benchv1.RuleAbove, Threshold: 5},
					{Name: "not-recorded", Series: "sessionsActive", Subject: "server", Condition: benchv1.RuleAbove, Threshold: 5}}},
		},
	}
	h.Create(run)
	markServerReady(t, h, specs.ValkeyName(run))
	run = h.Run("hot")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: specs.ValkeyName(run) + "-0", Namespace: h.NS, Labels: specs.ServerPodLabels(run)},
		Spec: corev1.PodSpec{NodeName: "db-1", Containers: []corev1.Container{{Name: "valkey", Image: "valkey/valkey:8.1",
			Resources: run.Spec.Target.Valkey.Resources}}},
	}
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	h.kubeletRealTool(h.WaitJob(specs.MeasureJobName(run, 0, 1)), node, "redis-benchmark", rd.Port,
		"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "-c", "10", "-n", "60000", "-t", "set", "--csv")
	run = h.WaitPhase("hot", 30*time.Second, benchv1.PhaseInvalid)
	rep := run.Status.Steps[0].Repetitions[0]
	why := strings.Join(rep.Reasons, "; ")
	t.Logf("%s: %s", rep.Verdict, why)
	if rep.Verdict != benchv1.VerdictInvalid || !strings.Contains(why, "the target was saturated") ||
		!strings.Contains(why, "serverCPUCores[server]=") || !strings.Contains(why, "above validity.maxTargetCPUPercent 75") {
		t.Errorf("the measurement is not Invalid with the figures: %s %q", rep.Verdict, rep.Reasons)
	}
	if !strings.Contains(why, "validity rule clients: connectedClients[server] was above 5 clients") {
		t.Errorf("the rule over the server's connected clients did not break: %q", rep.Reasons)
	}
	if strings.Contains(why, "not-recorded") {
		t.Errorf("a rule on a series never recorded broke: %q", rep.Reasons)
	}
}

// TestRunQueriesWithoutPrometheus: a run asking Prometheus for its own
// queries and hosts on an install without a Prometheus source gets one
// warning per measurement saying they were not asked, however often it
// is judged; a run that asks nothing gets none.
func TestRunQueriesWithoutPrometheus(t *testing.T) {
	run := &benchv1.BenchmarkRun{Spec: benchv1.BenchmarkRunSpec{Telemetry: benchv1.TelemetrySpec{
		Queries: []benchv1.TelemetryQuery{{Name: "appRequestsPerSecond", Query: "sum(rate(x[1m]))"}},
		Hosts:   []benchv1.HostSpec{{Name: "db-01", PrometheusSelector: `instance="db-01:9100"`}, {Name: "app-1", NodeExporter: &benchv1.NodeExporterEndpoint{URL: "http://app-1:9100/metrics"}}},
	}}}
	q := runQueries(run)
	if len(q.Queries) != 1 || len(q.Hosts) != 1 || q.Hosts[0].Selector != `instance="db-01:9100"` {
		t.Errorf("run queries %+v: the query and the host by selector (the other is the runner's)", q)
	}
	res := results.New("tool")
	warnUnasked(nil, run, res)
	warnUnasked(nil, run, res)
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "1 queries and 1 hosts, but this install has no Prometheus source") {
		t.Errorf("warnings %q", res.Warnings)
	}
	quiet := results.New("tool")
	warnUnasked(nil, &benchv1.BenchmarkRun{}, quiet)
	if len(quiet.Warnings) != 0 {
		t.Errorf("a run asking nothing: %q", quiet.Warnings)
	}
}
