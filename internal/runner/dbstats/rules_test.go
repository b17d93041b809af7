package dbstats

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// TestSessionsHeldBreakARuleOverTime: the poller records a real
// PostgreSQL every 500 ms while the test holds 4 sessions idle in a
// transaction for 3.5 s, then 4 again for 1 s. The rule "more than 3 for
// longer than 2s" breaks once, at the first hold (its moment within a
// poll of the hold's, the figure 4), not at the second; "for longer than
// 5s" does not break at all.
func TestSessionsHeldBreakARuleOverTime(t *testing.T) {
	srv := startPostgres(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := NewPostgres(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	const interval, held = 500 * time.Millisecond, 4
	hold := func(d time.Duration) (from, to time.Time) {
		t.Helper()
		var conns []*pgx.Conn
		for range held {
			c, err := pgx.Connect(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		var wg sync.WaitGroup
		from = time.Now()
		for _, c := range conns {
			if _, err := c.Exec(ctx, "BEGIN; SELECT 1"); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(d) // the sessions are held for d: what the rule measures
		to = time.Now()
		for _, c := range conns {
			wg.Add(1)
			go func() { defer wg.Done(); _ = c.Close(ctx) }()
		}
		wg.Wait()
		return from, to
	}
	rec := Start(ctx, p, interval)
	time.Sleep(time.Second) // a quiet start, measured
	longFrom, longTo := hold(3500 * time.Millisecond)
	time.Sleep(1500 * time.Millisecond) // quiet between the holds
	shortFrom, _ := hold(time.Second)
	time.Sleep(time.Second) // a quiet end, measured
	rep := rec.Stop(ctx)

	// The short hold was seen (a positive sign before judging that it did
	// not break the rule): a sample of 4 sessions after it began.
	seen := false
	for _, sr := range rep.Series {
		for _, sm := range sr.Samples {
			seen = seen || (sr.Name == "sessionsIdleInTransaction" && !sm.Time.Before(shortFrom) && sm.Value == held)
		}
	}
	if !seen {
		t.Fatalf("the 1-second hold from %s was not recorded: no sample of %d sessions", shortFrom.Format("15:04:05.000"), held)
	}
	r := results.New("test")
	telemetry.Attach(r, rep)
	rule := telemetry.Rule{Name: "held-transactions", Series: "sessionsIdleInTransaction", Subject: "server",
		Condition: telemetry.RuleAbove, Threshold: held - 1, For: 2 * time.Second}
	breaches := telemetry.JudgeRules(r, []telemetry.Rule{rule})
	t.Logf("sessions held idle in transaction %s..%s; breaches: %q", longFrom.Format("15:04:05.000"), longTo.Format("15:04:05.000"), r.Reasons)
	if len(breaches) != 1 || r.Verdict != results.Invalid {
		t.Fatalf("want one breach invalidating the result, got %d (%s): %q %q", len(breaches), r.Verdict, r.Reasons, r.Warnings)
	}
	b := breaches[0]
	if b.Value != held {
		t.Errorf("the breach's figure %g, want %d sessions", b.Value, held)
	}
	if d := b.From.Sub(longFrom); d < -interval-100*time.Millisecond || d > interval+100*time.Millisecond {
		t.Errorf("the breach begins at %s, the hold at %s: more than a poll apart", b.From.Format("15:04:05.000"), longFrom.Format("15:04:05.000"))
	}
	// The sessions close just after the hold's end: a poll then may still see them.
	if d := longTo.Sub(b.To); d < -200*time.Millisecond || d > interval+100*time.Millisecond {
		t.Errorf("the breach's last sample at %s, the hold ended at %s", b.To.Format("15:04:05.000"), longTo.Format("15:04:05.000"))
	}
	if strings.Contains(b.Text, "more time") {
		t.Errorf("the 1-second hold broke the 2-second rule too: %s", b.Text)
	}
	r2 := results.New("test")
	telemetry.Attach(r2, rep)
	rule.For = 5 * time.Second
	if breaches := telemetry.JudgeRules(r2, []telemetry.Rule{rule}); len(breaches) != 0 {
		t.Errorf("a 3.5-second hold broke a 5-second rule: %q", r2.Reasons)
	}
}
