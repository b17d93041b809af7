package disturb

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// A second of writes, read back: every acknowledged one is there, and
// the ledger removes its rows after.
func TestLedgerFindsEveryWrite(t *testing.T) {
	srv, cfg := startPostgres(t)
	from := time.Now().Add(100 * time.Millisecond)
	lr := StartLedger(testContext(t), Ledger{Name: "ok", Protocol: pod.ProtocolPostgres, Config: cfg}, from, from.Add(time.Second), &logBuffer{})
	rep := lr.Check(testContext(t))
	t.Logf("report %+v", rep)
	if rep.Acknowledged < 10 || rep.Failed != 0 || rep.MissingCount != 0 || len(rep.Warnings) != 0 {
		t.Errorf("want a second of writes every 20 ms, all acknowledged and found: %+v", rep)
	}
	if out, err := srv.Query("SELECT count(*) FROM " + LedgerTable); err != nil || out != "0" {
		t.Errorf("the ledger's rows are left: %q %v", out, err)
	}
}

// Rows lost behind the ledger's back, as the last writes before a
// failover can be, are named each.
func TestLedgerNamesLostWrites(t *testing.T) {
	srv, cfg := startPostgres(t)
	from := time.Now().Add(100 * time.Millisecond)
	lr := StartLedger(testContext(t), Ledger{Name: "lossy", Protocol: pod.ProtocolPostgres, Config: cfg}, from, from.Add(time.Second), &logBuffer{})
	select {
	case <-lr.done:
	case <-testContext(t).Done():
		t.Fatal("the writer did not end")
	}
	out, err := srv.Query("DELETE FROM " + LedgerTable + " WHERE id IN (SELECT id FROM " + LedgerTable + " ORDER BY id DESC LIMIT 5) RETURNING id")
	if err != nil {
		t.Fatal(err)
	}
	lost := strings.Fields(out)
	rep := lr.Check(testContext(t))
	t.Logf("lost %v; report %+v", lost, rep)
	slices.SortFunc(lost, func(a, b string) int { return atoi(a) - atoi(b) })
	got := slices.Clone(rep.Missing)
	slices.SortFunc(got, func(a, b string) int { return atoi(a) - atoi(b) })
	if len(lost) != 5 || !slices.Equal(got, lost) || rep.MissingCount != 5 {
		t.Errorf("missing %v (%d), want exactly the rows deleted: %v", got, rep.MissingCount, lost)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// PostgreSQL restarting mid-window (every connection cut): the writes
// during fail, the writer connects again, the writes after are
// acknowledged, and none acknowledged is lost.
func TestLedgerSurvivesARestart(t *testing.T) {
	srv, cfg := startPostgres(t)
	from := time.Now().Add(100 * time.Millisecond)
	to := from.Add(5 * time.Second)
	lr := StartLedger(testContext(t), Ledger{Name: "restart", Protocol: pod.ProtocolPostgres, Config: cfg}, from, to, &logBuffer{})
	time.Sleep(time.Until(from.Add(time.Second))) // not a wait: a second of writes before the restart
	restarted := time.Now()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	rep := lr.Check(testContext(t))
	t.Logf("restarted from %s to %s; report %+v", restarted.Format(time.StampMilli), up.Format(time.StampMilli), rep)
	if rep.Failed < 1 || rep.FirstFailure.Before(restarted) {
		t.Errorf("no write failed during the restart: %+v", rep)
	}
	if rep.Reconnected.IsZero() || rep.Reconnected.Before(rep.LastFailure) || !rep.Reconnected.Before(to) {
		t.Errorf("the writer did not write again after the restart: %+v", rep)
	}
	if rep.MissingCount != 0 || rep.Acknowledged < 50 {
		t.Errorf("%d acknowledged, %d missing (%v): want every acknowledged write found", rep.Acknowledged, rep.MissingCount, rep.Missing)
	}
}
