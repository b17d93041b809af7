package disturb

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// near says whether got is within slack after want (and not before it).
func near(got, want time.Time, slack time.Duration) bool {
	return !got.Before(want) && got.Sub(want) <= slack
}

// Four sessions of a long statement start at the instant asked, show in
// pg_stat_activity, are cancelled on the server when the duration ends,
// and leave no session behind.
func TestSQLLoadPostgres(t *testing.T) {
	_, cfg := startPostgres(t)
	ctx := testContext(t)
	watch := pgConnect(t, cfg)
	const app = "dbperf-disturb/cpu"
	var mostActive atomic.Int64
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for watchCtx.Err() == nil {
			var n int64
			if err := watch.QueryRow(watchCtx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'", app).Scan(&n); err == nil && n > mostActive.Load() {
				mostActive.Store(n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	var log logBuffer
	at := time.Now().Add(300 * time.Millisecond)
	l := SQLLoad{Name: "cpu", Protocol: pod.ProtocolPostgres, Config: cfg, Sessions: 4,
		Statements: []string{"SELECT count(*) FROM generate_series(1, 50000000)"}, Duration: 2 * time.Second}
	rep := RunSQLLoad(ctx, l, at, &log)
	stopWatch()
	<-watched
	t.Logf("report %+v\nlog:\n%s", rep, log.String())
	if rep.SessionsConnected != 4 || !near(rep.TookEffect, at, time.Second) {
		t.Errorf("took effect at %s (asked for %s) with %d sessions: want all 4 within 1 s", rep.TookEffect, at, rep.SessionsConnected)
	}
	if mostActive.Load() != 4 {
		t.Errorf("pg_stat_activity showed at most %d of the 4 sessions active", mostActive.Load())
	}
	if rep.StatementsCancelled < 1 || len(rep.Errors) != 0 {
		t.Errorf("cancelled %d statements, errors %v: want the statements in flight cancelled, no error", rep.StatementsCancelled, rep.Errors)
	}
	if end := at.Add(l.Duration); !near(rep.Ended, end, time.Second) {
		t.Errorf("ended at %s, %s after the duration's end", rep.Ended, rep.Ended.Sub(end))
	}
	if !strings.Contains(log.String(), "[dbperf-runner] disturbance cpu: ") {
		t.Errorf("no line of the disturbance in the log:\n%s", log.String())
	}
	testutil.Eventually(t, 10*time.Second, "no session of the load left", func() error {
		var n int
		if err := watch.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n); err != nil || n != 0 {
			return fmt.Errorf("%d sessions (%w)", n, err)
		}
		return nil
	})
}

// A statement that fails is counted under its SQLSTATE, and the session
// goes on running it.
func TestSQLLoadCountsErrorsByClass(t *testing.T) {
	_, cfg := startPostgres(t)
	rep := RunSQLLoad(testContext(t), SQLLoad{Name: "div", Protocol: pod.ProtocolPostgres, Config: cfg, Sessions: 1,
		Statements: []string{"SELECT 1/0"}, Duration: 500 * time.Millisecond}, time.Now(), &logBuffer{})
	if rep.Errors["22012"] < 2 || len(rep.Errors) != 1 || rep.StatementsCompleted != 0 {
		t.Errorf("errors %v, %d completed: want division_by_zero (22012) again and again, and nothing else", rep.Errors, rep.StatementsCompleted)
	}
}

// On MariaDB, BENCHMARK goes on on the server when the client goes away:
// the load kills it, and leaves nothing running.
func TestSQLLoadMariaDB(t *testing.T) {
	db, cfg := startMariaDB(t, "right-password")
	at := time.Now().Add(200 * time.Millisecond)
	l := SQLLoad{Name: "md5", Protocol: pod.ProtocolMySQL, Config: cfg, Sessions: 2,
		Statements: []string{"SELECT BENCHMARK(100000000, MD5('x'))"}, Duration: 2 * time.Second}
	var log logBuffer
	rep := RunSQLLoad(testContext(t), l, at, &log)
	t.Logf("report %+v\nlog:\n%s", rep, log.String())
	if rep.SessionsConnected != 2 || !near(rep.TookEffect, at, time.Second) {
		t.Errorf("took effect at %s (asked for %s) with %d sessions", rep.TookEffect, at, rep.SessionsConnected)
	}
	if rep.StatementsCancelled != 2 || rep.StatementsCompleted != 0 {
		t.Errorf("%d cancelled, %d completed: want both BENCHMARKs cancelled", rep.StatementsCancelled, rep.StatementsCompleted)
	}
	if end := at.Add(l.Duration); !near(rep.Ended, end, 2*time.Second) {
		t.Errorf("ended at %s, %s after the duration's end", rep.Ended, rep.Ended.Sub(end))
	}
	testutil.Eventually(t, 10*time.Second, "no BENCHMARK left in the processlist", func() error {
		out, err := mariaQuery(db, "SELECT count(*) FROM information_schema.processlist WHERE info LIKE 'SELECT BENCHMARK%'")
		if err != nil || out != "0" {
			return fmt.Errorf("%q %w", out, err)
		}
		return nil
	})
}

// Redis runs a command line again and again: DEBUG SLEEP holds the whole
// server, as a slow command of a noisy neighbour would.
func TestSQLLoadRedis(t *testing.T) {
	srv := testutil.StartRedis(t, "--enable-debug-command", "yes")
	cfg := dbstats.Config{Host: "127.0.0.1", Port: srv.Port}
	at := time.Now().Add(100 * time.Millisecond)
	rep := RunSQLLoad(testContext(t), SQLLoad{Name: "sleep", Protocol: pod.ProtocolRedis, Config: cfg, Sessions: 1,
		Statements: []string{"DEBUG SLEEP 0.2", `EVAL "local n = 0 for i = 1, 20000 do n = n + 1 end return n" 0`}, Duration: time.Second}, at, &logBuffer{})
	t.Logf("report %+v", rep)
	if rep.StatementsCompleted < 3 || len(rep.Errors) != 0 || !near(rep.TookEffect, at, time.Second) {
		t.Errorf("%d completed, errors %v, took effect at %s: want DEBUG SLEEP 0.2 about 5 times from %s", rep.StatementsCompleted, rep.Errors, rep.TookEffect, at)
	}
	if !near(rep.Ended, at.Add(time.Second), time.Second) {
		t.Errorf("ended at %s, want within 1 s of %s", rep.Ended, at.Add(time.Second))
	}
}

// A ClickHouse statement is killed by its query id when the duration
// ends: closing the HTTP request does not stop it in every version.
func TestSQLLoadClickHouse(t *testing.T) {
	ch := testutil.StartClickHouse(t)
	cfg := dbstats.Config{Host: "127.0.0.1", Port: ch.HTTPPort, Username: ch.User, Password: ch.Password}
	at := time.Now().Add(100 * time.Millisecond)
	rep := RunSQLLoad(testContext(t), SQLLoad{Name: "scan", Protocol: pod.ProtocolClickHouse, Config: cfg, Sessions: 2,
		Statements: []string{"SELECT count() FROM numbers(100000000000)"}, Duration: 2 * time.Second}, at, &logBuffer{})
	t.Logf("report %+v", rep)
	if rep.StatementsCancelled != 2 || rep.StatementsCompleted != 0 || !near(rep.TookEffect, at, time.Second) {
		t.Errorf("%d cancelled, %d completed, took effect at %s (asked for %s)", rep.StatementsCancelled, rep.StatementsCompleted, rep.TookEffect, at)
	}
	testutil.Eventually(t, 10*time.Second, "no query of the load left", func() error {
		out, err := ch.Query("SELECT count() FROM system.processes WHERE query LIKE '%numbers(100000000000)%' AND query NOT LIKE '%system.processes%'")
		if err != nil || out != "0" {
			return fmt.Errorf("%q %w", out, err)
		}
		return nil
	})
}

// A wrong password is refused, and appears neither in the log nor in the
// report, whatever the protocol.
func TestPasswordNeverShown(t *testing.T) {
	const wrong = "Wrong-Secret-4711"
	cases := map[string]func(t *testing.T) (pod.Protocol, dbstats.Config){
		"postgres": func(t *testing.T) (pod.Protocol, dbstats.Config) {
			_, cfg := startPostgres(t)
			return pod.ProtocolPostgres, cfg
		},
		"mysql": func(t *testing.T) (pod.Protocol, dbstats.Config) {
			_, cfg := startMariaDB(t, "right-password")
			return pod.ProtocolMySQL, cfg
		},
		"redis": func(t *testing.T) (pod.Protocol, dbstats.Config) {
			srv := testutil.StartRedis(t, "--requirepass", "right-password")
			return pod.ProtocolRedis, dbstats.Config{Host: "127.0.0.1", Port: srv.Port}
		},
	}
	for name, start := range cases {
		t.Run(name, func(t *testing.T) {
			protocol, cfg := start(t)
			cfg.Password = wrong
			var log logBuffer
			rep := RunSQLLoad(testContext(t), SQLLoad{Name: "wrong", Protocol: protocol, Config: cfg, Sessions: 2,
				Statements: []string{"SELECT 1"}, Duration: 300 * time.Millisecond}, time.Now(), &log)
			lr := StartLedger(testContext(t), Ledger{Name: "wrong", Protocol: protocol, Config: cfg}, time.Now(), time.Now().Add(300*time.Millisecond), &log)
			ledger := lr.Check(testContext(t))
			text := fmt.Sprintf("%+v %+v %s", rep, ledger, log.String())
			t.Logf("%s", text)
			if rep.SessionsConnected != 0 || ledger.Acknowledged != 0 {
				t.Fatalf("a wrong password was accepted: %+v %+v", rep, ledger)
			}
			if len(rep.Warnings)+len(rep.Errors) == 0 {
				t.Errorf("the refused login is not reported: %+v", rep)
			}
			if strings.Contains(text, wrong) {
				t.Errorf("the password shows")
			}
			if strings.Contains(text, strconv.Quote(wrong)) {
				t.Errorf("the password shows, quoted")
			}
		})
	}
}

// A load run once ends when its sessions are done, not at its duration.
func TestSQLLoadOnceEndsWhenDone(t *testing.T) {
	srv := testutil.StartRedis(t, "--enable-debug-command", "yes")
	cfg := dbstats.Config{Host: "127.0.0.1", Port: srv.Port}
	at := time.Now().Add(100 * time.Millisecond)
	rep := RunSQLLoad(testContext(t), SQLLoad{Name: "once", Protocol: pod.ProtocolRedis, Config: cfg, Sessions: 2, Once: true,
		Statements: []string{"DEBUG SLEEP 0.3"}, Duration: 20 * time.Second}, at, &logBuffer{})
	t.Logf("report %+v", rep)
	if rep.StatementsCompleted != 2 || len(rep.Errors) != 0 {
		t.Errorf("%d completed, errors %v: want each of 2 sessions' statement once", rep.StatementsCompleted, rep.Errors)
	}
	// DEBUG SLEEP holds the whole server: the two run one after the other.
	if took := rep.Ended.Sub(rep.Requested); took < 500*time.Millisecond || took > 5*time.Second {
		t.Errorf("the load ended %s after it was requested: want about 0.6 s (two DEBUG SLEEP 0.3), not its 20 s duration", took)
	}
}
