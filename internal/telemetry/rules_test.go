package telemetry

import (
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

func seriesOf(name, subject string, t0 time.Time, step time.Duration, values ...float64) results.Series {
	s := results.Series{Name: name, Subject: subject, Unit: "%", Source: "test"}
	for i, v := range values {
		s.Samples = append(s.Samples, results.Sample{Time: t0.Add(time.Duration(i+1) * step), Value: v})
	}
	return s
}

// TestRulesOverTime: each condition breaks on the series that break it,
// at the moment and with the figure, and holds on those that do not.
func TestRulesOverTime(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	result := func() *results.Result {
		r := results.New("pgbench")
		r.Series = []results.Series{
			// 5 s samples: above 90 from 12:00:15 to 12:00:30 (4 samples: 20 s).
			seriesOf("cpuBusyPercent", "host/db-01", t0, 5*time.Second, 50, 60, 95, 97, 99, 96, 40, 95, 50),
			seriesOf("cpuBusyPercent", "host/app-1", t0, 5*time.Second, 10, 10, 10, 10, 10, 10, 10, 10, 10),
			seriesOf("cpuBusyPercent.cpu0", "host/db-01", t0, 5*time.Second, 100, 100, 100, 100),
			seriesOf("cpuBusyPercent.cpu1", "host/db-01", t0, 5*time.Second, 5, 5, 5, 5),
			seriesOf("cpuBusyPercent.cpu2", "host/db-01", t0, 5*time.Second, 5, 5, 5, 5),
			seriesOf("cpuBusyPercent.cpu3", "host/db-01", t0, 5*time.Second, 10, 10, 10, 10),
		}
		return r
	}
	for _, c := range []struct {
		name  string
		rule  Rule
		want  string // "" holds
		valid bool
	}{
		{"above for 15s breaks", Rule{Name: "hot", Series: "cpuBusyPercent", Subject: "host/db-01", Condition: RuleAbove, Threshold: 90, For: 15 * time.Second},
			"validity rule hot: cpuBusyPercent[host/db-01] was above 90 % for 20s, longer than 15s, from 12:00:10.0Z to 12:00:30.0Z (4 samples; peak 99 %)", false},
		{"above for 20s holds", Rule{Name: "hot", Series: "cpuBusyPercent", Subject: "host/db-01", Condition: RuleAbove, Threshold: 90, For: 20 * time.Second}, "", true},
		{"any sample, twice", Rule{Name: "hot", Series: "cpuBusyPercent", Subject: "host/db-01", Condition: RuleAbove, Threshold: 90},
			"and 1 more time(s) in the window", false},
		{"below, every subject", Rule{Name: "idle", Series: "cpuBusyPercent", Condition: RuleBelow, Threshold: 20, For: 30 * time.Second, Warn: true},
			"validity rule idle: cpuBusyPercent[host/app-1] was below 20 % for 45s, longer than 30s", true},
		{"p95", Rule{Name: "p95", Series: "cpuBusyPercent", Subject: "host/db-01", Condition: RulePercentile, Percentile: 95, Threshold: 90},
			"validity rule p95: the p95 of cpuBusyPercent[host/db-01] over the window was 99 % (9 samples, first reached at 12:00:25.0Z), above 90 %", false},
		{"p50 holds", Rule{Name: "p50", Series: "cpuBusyPercent", Subject: "host/db-01", Condition: RulePercentile, Percentile: 50, Threshold: 95}, "", true},
		{"one core", Rule{Name: "one-core", Series: "cpuBusyPercent", Condition: RuleImbalance, Threshold: 3},
			"validity rule one-core: cpuBusyPercent.cpu0[host/db-01] averaged 100 %, 3.33× the mean of its 4 members (30), above 3×", false},
		{"one core, 4x holds", Rule{Name: "one-core", Series: "cpuBusyPercent", Condition: RuleImbalance, Threshold: 4}, "", true},
		// db-01 averages 75.8 %, app-1 10 %: 1.77× their mean.
		{"one host", Rule{Name: "one-host", Series: "cpuBusyPercent", Subject: "host", Condition: RuleImbalance, Threshold: 1.5},
			"validity rule one-host: cpuBusyPercent[host/db-01] averaged 75.8 %, 1.77× the mean of the 2 host subjects (42.9), above 1.5×", false},
		{"one host, 2x holds", Rule{Name: "one-host", Series: "cpuBusyPercent", Subject: "host", Condition: RuleImbalance, Threshold: 2}, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := result()
			breaches := JudgeRules(r, []Rule{c.rule})
			text := strings.Join(append(append([]string{}, r.Reasons...), r.Warnings...), " | ")
			if c.want == "" && len(breaches) > 0 {
				t.Errorf("broke: %s", text)
			}
			if c.want != "" && !strings.Contains(text, c.want) {
				t.Errorf("got %q, want %q", text, c.want)
			}
			if valid := r.Verdict == results.Succeeded; valid != c.valid {
				t.Errorf("verdict %s, want valid=%v (%s)", r.Verdict, c.valid, text)
			}
		})
	}
	// Judged twice (a reconcile repeated): the same reasons and warnings, once.
	twice := result()
	rules := []Rule{{Name: "hot", Series: "cpuBusyPercent", Subject: "host/db-01", Condition: RuleAbove, Threshold: 90},
		{Name: "idle", Series: "cpuBusyPercent", Condition: RuleBelow, Threshold: 20, Warn: true}}
	JudgeRules(twice, rules)
	reasons, warnings := len(twice.Reasons), len(twice.Warnings)
	JudgeRules(twice, rules)
	if len(twice.Reasons) != reasons || len(twice.Warnings) != warnings || reasons != 1 || warnings != 1 {
		t.Errorf("judged twice: %q %q", twice.Reasons, twice.Warnings)
	}
	r := result()
	JudgeRules(r, []Rule{{Name: "sessions", Series: "sessionsActive", Subject: "server", Condition: RuleAbove, Threshold: 40}})
	if r.Verdict != results.Succeeded || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "validity rule sessions was not judged: no series sessionsActive[server] was recorded") {
		t.Errorf("a rule on a series not recorded: %s %q", r.Verdict, r.Warnings)
	}
}
