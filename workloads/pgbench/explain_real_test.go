package pgbench

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/internal/runner/diagnose"
	"github.com/dbperf-io/dbperf-operator/internal/runner/profile"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// TestRealPgbenchComparisonExplainsItself: pgbench's select-only script
// against the local PostgreSQL through dbperf-runner, with the server's
// statistics and diagnostics recorded as a run records them, 4 vs 4
// repetitions (the fewest with an exact 95 % interval); the candidate's database has index scans turned off (what
// a dropped index does). The comparison finds the throughput Worse, its
// environment diff names the settings, and its suspects put the
// statement first, confirmed, with its plan change (index scan → seq
// scan) and its blocks per transaction; explain prints all three, and
// the HTML report shows the suspects (in Chromium when CHROMIUM is set).
// The server is profiled (perf) in every window: the scan's CPU per
// transaction grows, so a function of the server is a confirmed suspect,
// and the report draws both variants' differential flame graphs.
func TestRealPgbenchComparisonExplainsItself(t *testing.T) {
	bin, err := localdb.Tool("pgbench", "/usr/lib/postgresql/*/bin/pgbench")
	if err != nil {
		t.Skip(err)
	}
	srv, err := localdb.StartPostgres()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	env := append([]string{"env"}, srv.Env()...)
	if out, err := exec.Command(env[0], append(env[1:], bin, "-i", "-s", "2", "-q")...).CombinedOutput(); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	const statement = "SELECT abalance FROM pgbench_accounts WHERE aid = $1"
	spec := benchv1.BenchmarkRunSpec{Workload: benchv1.WorkloadSpec{Pgbench: &benchv1.PgbenchWorkload{}}}
	measure := func(side string) compare.Run {
		run := compare.Run{Name: side, Spec: spec, Steps: []benchv1.StepStatus{{Name: "run"}}}
		for rep := int32(1); rep <= 4; rep++ {
			var out strings.Builder
			stats := &runner.ServerStatistics{Protocol: pod.ProtocolPostgres, Interval: time.Second,
				Config: dbstats.Config{Host: "127.0.0.1", Port: srv.Port, Username: srv.User, Password: srv.Password, Database: srv.Database},
				Diagnostics: &diagnose.Options{WaitInterval: 20 * time.Millisecond, Plans: true,
					Profile: &profile.Options{Host: "127.0.0.1", Port: srv.Port}}}
			r := runner.Exec(context.Background(), runner.Options{Parser: Pgbench{}, Stdout: &out, Timeout: time.Minute, ServerStatistics: stats,
				SecretValues: []string{srv.Password},
				Command:      append(env, bin, "-n", "-S", "-M", "prepared", "-c", "2", "-j", "1", "-T", "2", "-P", "1")})
			if r.Verdict != results.Succeeded || r.Diagnostics == nil {
				t.Fatalf("%s #%d: %s %v, diagnostics %v\n%s", side, rep, r.Verdict, r.Reasons, r.Diagnostics, out.String())
			}
			if strings.Contains(out.String(), srv.Password) {
				t.Fatal("the password reached the output")
			}
			var headline []benchv1.MetricValue
			for _, m := range r.Headline() {
				headline = append(headline, benchv1.MetricValue{Name: m.Name, Operation: m.Operation, Value: m.Value, Unit: m.Unit, Direction: m.Direction})
			}
			run.Steps[0].Repetitions = append(run.Steps[0].Repetitions, benchv1.RepetitionStatus{Index: rep, Verdict: benchv1.VerdictSucceeded, Metrics: headline})
			run.Measurements = append(run.Measurements, compare.Measurement{Step: "run", Repetition: rep, Result: r})
		}
		return run
	}
	base := measure("indexed")
	if err := srv.SQL("ALTER DATABASE postgres SET enable_indexscan = off; ALTER DATABASE postgres SET enable_bitmapscan = off; ALTER DATABASE postgres SET enable_indexonlyscan = off"); err != nil {
		t.Fatal(err)
	}
	cand := measure("no-index-scans")
	rep, err := compare.Build(compare.Side{Name: "indexed", Runs: []compare.Run{base}}, compare.Side{Name: "no-index-scans", Runs: []compare.Run{cand}}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var explain strings.Builder
	if err := compare.Render(&explain, rep, "explain"); err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl dbperf explain:\n%s", explain.String())
	if rep.Summary == nil || rep.Summary.Verdict != compare.OverallRegression {
		t.Errorf("verdict %+v", rep.Summary)
	}
	envText := ""
	for _, d := range rep.Environment {
		envText += d.What + "=" + strings.Join(d.Candidate, ",") + "\n"
	}
	for _, s := range []string{"enable_indexscan", "enable_bitmapscan"} {
		if !strings.Contains(envText, "server setting "+s+"=off") {
			t.Errorf("the environment diff does not name %s: %s", s, envText)
		}
	}
	if len(rep.Suspects) == 0 {
		t.Fatal("no suspects")
	}
	first := rep.Suspects[0]
	if first.Kind != results.DiagnosticStatement || first.Name != statement || !first.Confirmed || !first.PlanChanged || !(first.DeltaMillis > 0) {
		t.Errorf("the first suspect: %+v", first)
	}
	if !strings.Contains(first.BaselinePlan, "Index") || !strings.Contains(first.CandidatePlan, "Seq Scan") {
		t.Errorf("plans:\n%s\n---\n%s", first.BaselinePlan, first.CandidatePlan)
	}
	blocks := false
	for _, f := range first.Figures {
		if f.Name == "sharedBlocksHit" && f.Candidate > 10*f.Baseline {
			blocks = true
		}
	}
	if !blocks {
		t.Errorf("the statement's blocks per transaction are not among its changes: %+v", first.Figures)
	}
	waits := false
	for _, s := range rep.Suspects {
		waits = waits || (s.Kind == results.DiagnosticWait && s.Confirmed && s.DeltaMillis > 0)
	}
	if !waits {
		t.Errorf("no wait event grew: %+v", rep.Suspects)
	}
	// A function of the server grew: its interval lies above zero. Not
	// "confirmed" — that also needs its p-value to survive the FDR over the
	// step's twenty-odd suspects, and at 4 against 4 a rank test's p has a
	// floor of 2/70 that passes only when enough others share it (two CI
	// runs: [postgres] +4.1 ms/tx, interval 3.9 … 5.9, unconfirmed).
	var grew *compare.Suspect
	for i, s := range rep.Suspects {
		if s.Kind == results.DiagnosticFunction && s.DeltaMillis > 0 && s.LowMillis > 0 && grew == nil {
			grew = &rep.Suspects[i]
		}
	}
	if grew == nil {
		t.Errorf("no function of the server grew (an interval above zero): %+v", rep.Suspects)
	} else {
		t.Logf("the first function that grew: %s %.4f → %.4f ms/tx", grew.Name, grew.BaselineMillis, grew.CandidateMillis)
	}
	if len(rep.Flames) != 1 || rep.Flames[0].BaselineRepetitions != 4 || rep.Flames[0].CandidateRepetitions != 4 || rep.Flames[0].BaselineSamples == 0 {
		t.Errorf("flame data: %d steps %+v", len(rep.Flames), rep.Flames)
	}
	text := explain.String()
	for _, want := range []string{"Why: statement " + statement, "plan changed", "server setting enable_indexscan", "Seq Scan on pgbench_accounts"} {
		if !strings.Contains(text, want) {
			t.Errorf("explain does not say %q", want)
		}
	}
	checkSuspectsInChromium(t, rep, statement)
}

// checkSuspectsInChromium renders the report in headless Chromium: the
// suspects' table is on the page, the statement its first row, marked
// worse, with the plan change.
func checkSuspectsInChromium(t *testing.T, rep *compare.Report, statement string) {
	dom := testutil.ChromiumDOM(t, "", "pgbench-suspects.png", func(f *os.File) error { return compare.RenderHTML(f, []*compare.Report{rep}) })
	if dom == "" {
		return
	}
	start := strings.Index(dom, `<table class="sortable suspects">`)
	if start < 0 {
		t.Fatal("no suspects' table in the page Chromium rendered")
	}
	row := regexp.MustCompile(`<tbody>\s*<tr class="([a-z]*)"><td>[^<]*</td><td>statement</td><td class="stmt"><code>([^<]*)</code> <b>plan changed</b>`)
	m := row.FindStringSubmatch(dom[start:])
	if m == nil || m[1] != "worse" || m[2] != statement {
		t.Errorf("the suspects' first row: %v\n%s", m, dom[start:min(len(dom), start+2000)])
	}
	if n := strings.Count(dom, `class="chart flamegraph"`); n != 2 {
		t.Errorf("%d flame graphs in the page Chromium rendered, want the two orientations", n)
	}
}
