package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// checkRealTools checks what memtier_benchmark and HammerDB measured on the
// pools, as the runs' results keep it, against the servers' own counters
// and the tools' own output:
//   - memtier-redis: the server ran exactly the SETs of the load step (the
//     key range) plus the SETs memtier counted in every measurement, and
//     exactly the GETs it counted (INFO commandstats); each throughput is
//     the requests over the measured seconds;
//   - hammerdb-cnpg: the run's NOPM is the one of HammerDB's own TEST RESULT
//     line in the pod's log, and the server committed at least NOPM new
//     orders in the measured minute (district.d_next_o_id) and counted at
//     least TPM transactions.
func checkRealTools(ctx context.Context, t *testing.T, plugin string, c *sim.Cluster, final map[string]*benchv1.BenchmarkRun,
	redis testutil.Redis, pg testutil.Postgres) {
	t.Helper()
	full := func(name string) compare.Run { return fullResults(ctx, t, plugin, c, name) }
	value := metricValue

	// memtier.
	if run := final["memtier-redis"]; run != nil && run.Status.Phase == benchv1.PhaseSucceeded {
		client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:" + strconv.Itoa(redis.Port)})
		defer client.Close()
		calls := testutil.RedisCommandCalls(t, client)
		var sets, gets float64
		r := full("memtier-redis")
		if len(r.Measurements) != 2 {
			t.Errorf("memtier-redis: %d measurements, want 2 (pipelines 1 and 8)", len(r.Measurements))
		}
		for _, m := range r.Measurements {
			s, g := value(m.Result, "requests", "Sets"), value(m.Result, "requests", "Gets")
			if s <= 0 || g <= 0 {
				t.Errorf("memtier-redis %s: %v SETs and %v GETs", m.Step, s, g)
			}
			sets, gets = sets+s, gets+g
			// memtier's rate is its requests over the time it ran: at least
			// the test time it was given (3 s), at most as long as its
			// process ran (longer on a machine too busy to keep up).
			ops, secs := value(m.Result, "opsPerSecond", "Totals"), run.Spec.Workload.Memtier.Duration.Seconds()
			ran := secs
			if r := m.Result; r != nil && r.StartTime != nil && r.EndTime != nil {
				ran = max(secs, r.EndTime.Sub(*r.StartTime).Seconds())
			}
			if ops*secs > 1.15*(s+g) || ops*ran < 0.85*(s+g) {
				t.Errorf("memtier-redis %s: %v ops/s over %v s (its process ran %.1f s), but %v requests", m.Step, ops, secs, ran, s+g)
			}
		}
		// The server ran every request memtier counted, and at most those
		// in flight when each test time ended besides (sent, answered after
		// memtier stopped counting): one pipeline per connection.
		mt := run.Spec.Workload.Memtier
		keyRange, inFlight := float64(mt.KeyMaximum), 0.0
		for _, threads := range mt.Threads {
			for _, pipeline := range mt.Pipeline {
				inFlight += float64(threads * mt.Clients * pipeline)
			}
		}
		extraSets, extraGets := calls["set"]-keyRange-sets, calls["get"]-gets
		if extraSets < 0 || extraGets < 0 || extraSets+extraGets > inFlight {
			t.Errorf("memtier-redis: the server ran %v SETs and %v GETs; memtier counted %v + %v (load) SETs and %v GETs (at most %v more may have been in flight)",
				calls["set"], calls["get"], sets, keyRange, gets, inFlight)
		}
		t.Logf("memtier-redis: %v SETs and %v GETs, as the server counted them", sets, gets)
	}

	// HammerDB.
	if run := final["hammerdb-cnpg"]; run != nil && run.Status.Phase == benchv1.PhaseSucceeded {
		out, err := exec.CommandContext(ctx, plugin, "logs", "hammerdb-cnpg", "--kubeconfig", c.Kubeconfig, "-n", ns).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl dbperf logs hammerdb-cnpg: %v\n%s", err, out)
		}
		line := regexp.MustCompile(`TEST RESULT : System achieved ([0-9]+) NOPM from ([0-9]+) PostgreSQL TPM`).FindSubmatch(out)
		if line == nil {
			t.Fatalf("hammerdb-cnpg: no TEST RESULT line in the pods' logs:\n%.3000s", out)
		}
		toolNOPM, _ := strconv.ParseFloat(string(line[1]), 64)
		toolTPM, _ := strconv.ParseFloat(string(line[2]), 64)
		r := full("hammerdb-cnpg")
		if len(r.Measurements) != 1 {
			t.Fatalf("hammerdb-cnpg: %d measurements, want 1", len(r.Measurements))
		}
		nopm, tpm := value(r.Measurements[0].Result, "nopm", ""), value(r.Measurements[0].Result, "tpm", "")
		if nopm != toolNOPM || tpm != toolTPM {
			t.Errorf("hammerdb-cnpg: NOPM %v and TPM %v in the results, HammerDB's own line says %v and %v", nopm, tpm, toolNOPM, toolTPM)
		}
		if p := run.Status.Primary; p == nil || p.Value != nopm {
			t.Errorf("hammerdb-cnpg: the status's primary %+v is not NOPM %v", p, nopm)
		}
		orders, err := pg.QueryIn("tpcc", "SELECT sum(d_next_o_id) - 10 * 3001 FROM district")
		if err != nil {
			t.Fatal(err)
		}
		newOrders, _ := strconv.ParseFloat(orders, 64)
		tx, err := pg.Query("SELECT sum(xact_commit + xact_rollback) FROM pg_stat_database")
		if err != nil {
			t.Fatal(err)
		}
		transactions, _ := strconv.ParseFloat(tx, 64)
		if nopm <= 0 || nopm > newOrders || newOrders > 3*nopm+200 {
			t.Errorf("hammerdb-cnpg: NOPM %v over a 1-minute test, the server committed %v new orders in the whole run", nopm, newOrders)
		}
		if tpm <= 0 || tpm > transactions {
			t.Errorf("hammerdb-cnpg: TPM %v, the server counted %v transactions since it started", tpm, transactions)
		}
		t.Logf("hammerdb-cnpg: NOPM %v TPM %v (HammerDB: %s); the server: %v new orders", nopm, tpm, line[0], newOrders)
	}
}

// checkCustom checks the custom workload's two examples against their
// servers, and that two runs of one compare like runs of any tool:
//   - custom-psql: the insert statement ran as many times as the script
//     reports (rows of dbperf_history, which its prepare step made empty);
//   - custom-hist-v3 and -v4a: the server ran exactly the SETs and GETs the
//     programs counted in every measurement (INFO commandstats), each
//     measurement merged two generators' histograms into exact percentiles,
//     and kubectl dbperf compare gives a verdict on the primary metric and
//     on each operation.
func checkCustom(ctx context.Context, t *testing.T, plugin string, c *sim.Cluster, final map[string]*benchv1.BenchmarkRun,
	pg testutil.Postgres, redis testutil.Redis) {
	t.Helper()
	dbperf := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, plugin, append(args, "--kubeconfig", c.Kubeconfig, "-n", ns)...).CombinedOutput()
		return string(out), err
	}
	full := func(name string) compare.Run { return fullResults(ctx, t, plugin, c, name) }
	value := metricValue
	for _, name := range []string{"custom-psql", "custom-hist-v3", "custom-hist-v4a"} {
		if run := final[name]; run == nil || run.Status.Phase != benchv1.PhaseSucceeded {
			return // reported with the other runs
		}
	}

	psql := full("custom-psql")
	if len(psql.Measurements) != 1 {
		t.Fatalf("custom-psql: %d measurements, want 1", len(psql.Measurements))
	}
	m := psql.Measurements[0].Result
	inserts := value(m, "operations", "insert")
	rows, err := pg.Query("SELECT count(*) FROM dbperf_history")
	if err != nil {
		t.Fatal(err)
	}
	if inserts != 20 || rows != "20" {
		t.Errorf("custom-psql: the script reports %v inserts, the table holds %s rows; want 20 (repeat 20)", inserts, rows)
	}
	for _, op := range []string{"point_select", "update", "insert", "aggregate"} {
		if value(m, "latencyP95Millis", op) <= 0 {
			t.Errorf("custom-psql: no p95 latency of %s: %+v", op, m.Metrics)
		}
	}

	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:" + strconv.Itoa(redis.Port)})
	defer client.Close()
	calls := testutil.RedisCommandCalls(t, client)
	var sets, gets float64
	for _, name := range []string{"custom-hist-v3", "custom-hist-v4a"} {
		r := full(name)
		if len(r.Measurements) != 2 {
			t.Errorf("%s: %d measurements, want 2", name, len(r.Measurements))
		}
		for _, m := range r.Measurements {
			s, g := value(m.Result, "requests", "SET"), value(m.Result, "requests", "GET")
			// 2 generators × 4 clients × 2000 requests, SET and GET alternating.
			if s+g != 2*4*2000 {
				t.Errorf("%s #%d: %v SETs and %v GETs, want 16000 requests from the two generators", name, m.Repetition, s, g)
			}
			sets, gets = sets+s, gets+g
			if len(m.Result.Histograms) == 0 || value(m.Result, "latencyP99Millis", "GET") <= 0 {
				t.Errorf("%s #%d: no merged histograms or p99: %v", name, m.Repetition, m.Result.Metrics)
			}
		}
	}
	if calls["set"] != sets || calls["get"] != gets {
		t.Errorf("custom-hist: the server ran %v SETs and %v GETs, the programs counted %v and %v", calls["set"], calls["get"], sets, gets)
	}
	out, err := dbperf("compare", "custom-hist-v3", "custom-hist-v4a")
	if err != nil || !strings.Contains(out, "opsPerSecond") || !strings.Contains(out, "latencyP99Millis") {
		t.Errorf("kubectl dbperf compare custom-hist-v3 custom-hist-v4a: %v\n%s", err, out)
	}
	t.Logf("custom: %v inserts; %v SETs and %v GETs as the server counted them; compare:\n%.1500s", inserts, sets, gets, out)
}

// fullResults is a run's full results, as kubectl dbperf results -o json
// exports them.
func fullResults(ctx context.Context, t *testing.T, plugin string, c *sim.Cluster, name string) compare.Run {
	t.Helper()
	out, err := exec.CommandContext(ctx, plugin, "results", name, "--kubeconfig", c.Kubeconfig, "-n", ns, "-o", "json").Output()
	if err != nil {
		t.Fatalf("kubectl dbperf results %s: %v\n%s", name, err, out)
	}
	var r compare.Run
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("kubectl dbperf results %s: %v", name, err)
	}
	return r
}

// metricValue is a metric's value in a result, 0 when it has none.
func metricValue(r *results.Result, name, op string) float64 {
	m, _ := r.Get(results.Key{Name: name, Operation: op})
	return m.Value
}
