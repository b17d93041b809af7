package main

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

func telemetryMetric(t *testing.T, r *results.Result, name, subject string) results.Metric {
	t.Helper()
	m, ok := r.Get(results.Key{Name: name, Operation: subject})
	if !ok || !m.IsTelemetry() {
		t.Fatalf("no telemetry metric %s[%s] in %+v (warnings %v)", name, subject, r.Metrics, r.Warnings)
	}
	return m
}

// TestExecRecordsTheRedisServersSide: the runner polls a real redis-server
// over a real redis-benchmark run. The server's CPU it reports agrees with
// the server process's CPU time in /proc over the tool's run, the commands
// with the requests, every figure is marked as telemetry of the server,
// the series carry absolute instants inside the window, and the efficiency
// is the throughput per server core.
func TestExecRecordsTheRedisServersSide(t *testing.T) {
	rd := testutil.StartRedis(t, "--requirepass", "Sekret-Redis-99")
	pid := testutil.RedisPid(t, rd.Port, "Sekret-Redis-99")
	t.Setenv("DBPERF_TARGET_PASSWORD", "Sekret-Redis-99")
	const requests = 100000
	before := testutil.MustProcessCPUSeconds(t, pid)
	code, out, r := execRunner(t, "--workload", "redis-benchmark", "--max-cpu-percent", "100", "--redact-env", "DBPERF_TARGET_PASSWORD",
		"--server-statistics", "redis", "--server-address", "127.0.0.1:"+strconv.Itoa(rd.Port), "--server-poll-interval", "500ms", "--",
		"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "-a", "Sekret-Redis-99", "-c", "20", "-n", strconv.Itoa(requests), "-t", "set,get", "--csv")
	procCores := (testutil.MustProcessCPUSeconds(t, pid) - before) / r.EndTime.Sub(*r.StartTime).Seconds()
	if code != runner.ExitValid {
		t.Fatalf("exit %d: %v\n%s", code, r.Reasons, out)
	}
	if strings.Contains(out, "Sekret-Redis-99") {
		t.Fatal("the password is in the runner's output")
	}
	cores := telemetryMetric(t, r, "serverCPUCores", "server")
	window := telemetryMetric(t, r, "windowSeconds", "server").Value
	commands := telemetryMetric(t, r, "commandsPerSecond", "server").Value * window
	t.Logf("server CPU %.3f cores from INFO, %.3f from /proc over the tool's run (%+.1f %%); %.0f commands for %d requests over %.2f s; poll %.2f ms",
		cores.Value, procCores, 100*(cores.Value-procCores)/procCores, commands, 2*requests, window, telemetryMetric(t, r, "pollMillisMean", "server").Value)
	if cores.Source != "redis" || cores.Unit != "cores" {
		t.Errorf("server CPU %+v: want source redis, unit cores", cores)
	}
	if cores.Value <= 0 || math.Abs(cores.Value-procCores) > 0.2*procCores {
		t.Errorf("server CPU %.3f cores from INFO, %.3f from /proc: more than 20 %% apart", cores.Value, procCores)
	}
	if math.Abs(commands-2*requests) > 0.02*2*requests {
		t.Errorf("%.0f commands, want about the %d requests", commands, 2*requests)
	}
	primary, _ := r.Get(r.Primary)
	eff := telemetryMetric(t, r, telemetry.FigureEfficiency, "target")
	if want := primary.Value / cores.Value; math.Abs(eff.Value-want) > 1e-9*want || eff.Direction != results.HigherIsBetter {
		t.Errorf("efficiency %+v, want %v %s per core, higher is better", eff, want, primary.Unit)
	}
	var cpuSeries *results.Series
	for i := range r.Series {
		if r.Series[i].Name == "serverCPUCores" {
			cpuSeries = &r.Series[i]
		}
	}
	if cpuSeries == nil || len(cpuSeries.Samples) < 2 || cpuSeries.Source != "redis" {
		t.Fatalf("no server CPU series in %+v", r.Series)
	}
	for _, s := range cpuSeries.Samples {
		if s.Time.Before(r.StartTime.Add(-time.Second)) || s.Time.After(r.EndTime.Add(time.Second)) {
			t.Errorf("sample at %s outside the window %s - %s", s.Time, r.StartTime, r.EndTime)
		}
	}
}

// TestExecRecordsThePostgresServersSide: the commits the runner's poller
// counts over a real pgbench run agree with the transactions pgbench ran,
// and the active sessions it saw include pgbench's clients.
func TestExecRecordsThePostgresServersSide(t *testing.T) {
	pg := testutil.StartPostgres(t)
	setEnv(t, pg.Env())
	t.Setenv("DBPERF_TARGET_USERNAME", pg.User)
	t.Setenv("DBPERF_TARGET_PASSWORD", pg.Password)
	if code, out, r := execRunner(t, "--workload", "pgbench", "--prepare", "--", "pgbench", "--initialize", "--quiet", "--scale", "1"); code != runner.ExitValid {
		t.Fatalf("init: exit %d, %v\n%s", code, r.Reasons, out)
	}
	const clients, perClient = 4, 1500
	code, out, r := execRunner(t, "--workload", "pgbench", "--max-cpu-percent", "100", "--redact-env", "DBPERF_TARGET_PASSWORD",
		"--server-statistics", "postgres", "--server-address", "127.0.0.1:"+strconv.Itoa(pg.Port), "--server-database", pg.Database,
		"--server-poll-interval", "500ms", "--",
		"pgbench", "--client", strconv.Itoa(clients), "--jobs", "2", "--transactions", strconv.Itoa(perClient), "--builtin", "tpcb-like")
	if code != runner.ExitValid {
		t.Fatalf("exit %d: %v\n%s", code, r.Reasons, out)
	}
	window := telemetryMetric(t, r, "windowSeconds", "server").Value
	commits := telemetryMetric(t, r, "commitsPerSecond", "server").Value * window
	active := telemetryMetric(t, r, "sessionsActiveMax", "server").Value
	t.Logf("commits %.0f for %d pgbench transactions over %.2f s; active sessions max %v", commits, clients*perClient, window, active)
	// pgbench's own connection statements and the poller's first and last
	// polls straddle the tool's start and end by a round trip.
	if want := float64(clients * perClient); math.Abs(commits-want) > 0.03*want {
		t.Errorf("%.0f commits, want about %v", commits, want)
	}
	if active < 1 || active > clients {
		t.Errorf("active sessions max %v with %d clients", active, clients)
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, pg.Password) {
			t.Errorf("a warning holds the password: %s", w)
		}
	}
}

// TestExecServerStatisticsRestartInvalidates: when the server's statistics
// start again in the middle of a measurement (here CONFIG RESETSTAT on a
// real redis-server; a restart changes its run_id the same way), the
// measurement is Invalid and the reason says so: its server side straddles
// two lives of the counters.
func TestExecServerStatisticsRestartInvalidates(t *testing.T) {
	rd := testutil.StartRedis(t)
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(rd.Port), Protocol: 2, DisableIdentity: true})
	defer c.Close()
	const requests = 200000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Reset once the tool is well under way (a quarter of its work
		// done, several polls taken), long before it ends.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			n, err := c.Info(context.Background(), "stats").Result()
			if err == nil && commandsProcessed(n) > requests/4 {
				if err := c.ConfigResetStat(context.Background()).Err(); err != nil {
					t.Errorf("CONFIG RESETSTAT: %v", err)
				}
				return
			}
		}
		t.Error("the tool never got a quarter through its requests")
	}()
	code, out, r := execRunner(t, "--workload", "redis-benchmark", "--max-cpu-percent", "100",
		"--server-statistics", "redis", "--server-address", "127.0.0.1:"+strconv.Itoa(rd.Port), "--server-poll-interval", "200ms", "--",
		"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "-c", "4", "-n", strconv.Itoa(requests), "-t", "set", "--csv")
	wg.Wait()
	if code != runner.ExitInvalid || r.Verdict != results.Invalid {
		t.Fatalf("exit %d, verdict %s, reasons %v\n%s", code, r.Verdict, r.Reasons, out)
	}
	if !strings.Contains(strings.Join(r.Reasons, "; "), "restarted") {
		t.Errorf("the reasons do not name the restart: %v", r.Reasons)
	}
	if restarts := telemetryMetric(t, r, "serverRestarts", "server"); restarts.Value != 1 {
		t.Errorf("serverRestarts %v, want 1", restarts.Value)
	}
	if _, ok := r.Get(r.Primary); !ok {
		t.Error("the invalid measurement lost its number")
	}
}

func commandsProcessed(info string) int {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// TestExecWithoutTheServersStatistics: a server the poller cannot log in
// to leaves the tool's measurement standing, with a warning that names the
// server and not the password.
func TestExecWithoutTheServersStatistics(t *testing.T) {
	rd := testutil.StartRedis(t, "--requirepass", "right-one")
	t.Setenv("DBPERF_TARGET_PASSWORD", "Wrong-Pass-123")
	code, out, r := execRunner(t, "--workload", "redis-benchmark", "--max-cpu-percent", "0", "--redact-env", "DBPERF_TARGET_PASSWORD",
		"--server-statistics", "redis", "--server-address", "127.0.0.1:"+strconv.Itoa(rd.Port), "--",
		"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "-a", "right-one", "-n", "2000", "-t", "get", "--csv")
	if code != runner.ExitValid {
		t.Fatalf("exit %d: %v\n%s", code, r.Reasons, out)
	}
	warned := false
	for _, w := range r.Warnings {
		warned = warned || strings.Contains(w, "redis telemetry") && strings.Contains(w, "127.0.0.1")
		if strings.Contains(w, "Wrong-Pass-123") {
			t.Errorf("a warning holds the password: %s", w)
		}
	}
	if !warned || strings.Contains(out, "Wrong-Pass-123") {
		t.Errorf("no warning naming the server, or the password printed: %v\n%s", r.Warnings, out)
	}
	for _, m := range r.Metrics {
		if m.IsTelemetry() {
			t.Errorf("a telemetry figure without statistics: %+v", m)
		}
	}
}

// TestExecServerKilledMidMeasurement: the target's server dies in the
// middle of a measurement and comes back (PostgreSQL stopped at once, as a
// killed process, and started again on the same data). The tool's clients
// are cut off; the measurement is never a trusted number: it is Failed or
// Invalid, and its reasons name the restart the poller saw.
func TestExecServerKilledMidMeasurement(t *testing.T) {
	pg := testutil.StartPostgres(t)
	setEnv(t, pg.Env())
	t.Setenv("DBPERF_TARGET_USERNAME", pg.User)
	t.Setenv("DBPERF_TARGET_PASSWORD", pg.Password)
	if code, out, r := execRunner(t, "--workload", "pgbench", "--prepare", "--", "pgbench", "--initialize", "--quiet", "--scale", "1"); code != runner.ExitValid {
		t.Fatalf("init: exit %d, %v\n%s", code, r.Reasons, out)
	}
	restarted := make(chan error, 1)
	go func() {
		time.Sleep(2500 * time.Millisecond)
		restarted <- pg.Restart()
	}()
	code, out, r := execRunner(t, "--workload", "pgbench", "--max-cpu-percent", "0",
		"--server-statistics", "postgres", "--server-address", "127.0.0.1:"+strconv.Itoa(pg.Port), "--server-database", pg.Database,
		"--server-poll-interval", "500ms", "--",
		"pgbench", "--client", "4", "--jobs", "2", "--time", "6", "--builtin", "select-only")
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	t.Logf("exit %d, verdict %s, reasons %q, warnings %q", code, r.Verdict, r.Reasons, r.Warnings)
	if r.Verdict == results.Succeeded {
		t.Fatalf("a measurement across a server restart succeeded\n%s", out)
	}
	if !strings.Contains(strings.Join(r.Reasons, "; "), "restarted") {
		t.Errorf("the reasons do not name the restart: %q", r.Reasons)
	}
}

// TestExecStallIsFlagged: a real pgbench run against the local PostgreSQL,
// whose processes are stopped (SIGSTOP) for 4 s in the middle, is flagged
// with the moment and the length of the stall (to pgbench's 1 s progress
// resolution: 3 to 4 s, whatever the phase of the stop), and Invalid past
// --max-stall 2s; the same run without the stop is not flagged.
func TestExecStallIsFlagged(t *testing.T) {
	pg := initializedPgbench(t)
	tool := []string{"pgbench", "--client", "2", "--jobs", "1", "--time", "9", "--progress", "1", "--builtin", "select-only"}
	args := append([]string{"--workload", "pgbench", "--max-cpu-percent", "0", "--max-stall", "2s", "--"}, tool...)

	code, out, steady := execRunner(t, args...)
	if code != runner.ExitValid {
		t.Fatalf("the steady run: exit %d, %q %q\n%s", code, steady.Reasons, steady.Warnings, out)
	}
	for _, w := range steady.Warnings {
		if strings.Contains(w, "stalled") {
			t.Errorf("the steady run is flagged: %s", w)
		}
	}

	paused := make(chan error, 1)
	go func() {
		time.Sleep(3 * time.Second)
		paused <- pg.Pause(4 * time.Second)
	}()
	code, out, stalled := execRunner(t, args...)
	if err := <-paused; err != nil {
		t.Fatal(err)
	}
	why := strings.Join(stalled.Reasons, "; ")
	t.Logf("exit %d, verdict %s: %s", code, stalled.Verdict, why)
	if stalled.Verdict != results.Invalid || !strings.Contains(why, "stalled from") || !strings.Contains(why, "validity.maxStall 2s") {
		t.Fatalf("the paused run is not Invalid for its stall: %s %q %q\n%s", stalled.Verdict, stalled.Reasons, stalled.Warnings, out)
	}
	s := results.Stalls(stalled, results.DefaultStallPercent)
	if len(s) != 1 || s[0].Length() < 3*time.Second || s[0].Length() > 5*time.Second || s[0].From < 2*time.Second || s[0].From > 5*time.Second {
		t.Errorf("stalls %+v: want one of about 4 s beginning about 3 s in", s)
	}
}

// initializedPgbench starts the local PostgreSQL with pgbench's tables at
// scale 1, initialised through the runner's prepare step, and points the
// environment at it.
func initializedPgbench(t *testing.T) testutil.Postgres {
	t.Helper()
	pg := testutil.StartPostgres(t)
	setEnv(t, pg.Env())
	if code, out, r := execRunner(t, "--workload", "pgbench", "--prepare", "--", "pgbench", "--initialize", "--quiet", "--scale", "1"); code != runner.ExitValid {
		t.Fatalf("init: exit %d, %v\n%s", code, r.Reasons, out)
	}
	return pg
}
