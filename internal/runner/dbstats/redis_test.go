package dbstats

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// TestRedisCPUMatchesProc: while redis-benchmark runs a fixed number of
// requests, the server CPU INFO reports agrees with the server process's
// CPU time in /proc over the window, and the commands with the requests.
func TestRedisCPUMatchesProc(t *testing.T) {
	srv := testutil.StartRedis(t)
	pid := testutil.RedisPid(t, srv.Port, "")
	ctx := context.Background()
	p, err := NewRedis(ctx, Config{Host: "127.0.0.1", Port: srv.Port})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	const requests = 150000 // of each of SET and GET
	procBefore := testutil.MustProcessCPUSeconds(t, pid)
	rec := Start(ctx, p, testInterval)
	runLoad(t, nil, "redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(srv.Port), "-c", "20", "-n", strconv.Itoa(requests), "-t", "set,get", "-q")
	rep := rec.Stop(ctx)
	procCPU := testutil.MustProcessCPUSeconds(t, pid) - procBefore

	window := mustFigure(t, rep, "windowSeconds")
	cores := mustFigure(t, rep, "serverCPUCores")
	procCores := procCPU / window
	commands := mustFigure(t, rep, "commandsPerSecond") * window
	t.Logf("server CPU from INFO %.3f cores (user %.3f, system %.3f), from /proc %.3f cores (%+.1f %%) over %.1f s; commands %.0f for %d requests; clients max %v; poll %.2f ms",
		cores, mustFigure(t, rep, "serverCPUUserCores"), mustFigure(t, rep, "serverCPUSystemCores"), procCores, 100*(cores-procCores)/procCores,
		window, commands, 2*requests, mustFigure(t, rep, "connectedClientsMax"), mustFigure(t, rep, "pollMillisMean"))
	if cores <= 0 || !within(cores, procCores, 0.20) {
		t.Errorf("server CPU %.3f cores from INFO, %.3f from /proc: more than 20 %% apart", cores, procCores)
	}
	// redis-benchmark adds a few CONFIG GETs of its own.
	if !within(commands, 2*requests, 0.01) {
		t.Errorf("commands %.0f, want the %d requests", commands, 2*requests)
	}
	if got := mustFigure(t, rep, "connectedClientsMax"); got < 10 || got > 21 {
		t.Errorf("connectedClientsMax %v with 20 benchmark clients", got)
	}
	if mustFigure(t, rep, "usedMemoryBytesMax") <= 0 {
		t.Error("no memory used")
	}
}

// TestRedisStatisticsResetIsNamed: CONFIG RESETSTAT in a window restarts
// the command counters (not the CPU): the warning names it, and the CPU
// figure still counts over the whole window.
func TestRedisStatisticsResetIsNamed(t *testing.T) {
	srv := testutil.StartRedis(t)
	ctx := context.Background()
	p, err := NewRedis(ctx, Config{Host: "127.0.0.1", Port: srv.Port})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rec := Start(ctx, p, testInterval)
	waitForPolls(t, rec, 2)
	if err := p.client.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	waitForPolls(t, rec, 3)
	rep := rec.Stop(ctx)
	if got := mustFigure(t, rep, "serverRestarts"); got != 1 {
		t.Errorf("serverRestarts = %v, want 1 (warnings %q)", got, rep.Warnings)
	}
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), RestartWarning) {
		t.Errorf("warnings %q do not name the reset", rep.Warnings)
	}
	if cores := mustFigure(t, rep, "serverCPUCores"); cores > 0.5 {
		t.Errorf("an idle server used %v cores: the CPU counter, which did not reset, was taken as restarted", cores)
	}
}
