package hammerdb

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

type want struct {
	verdict   results.Verdict
	reason    string
	nopm, tpm float64
	vus       string
	// profile: NEWORD p95 and p99 in ms (summary or upper bound).
	profile    [2]float64
	upperBound bool
	warning    string
	points     int
}

// Every HammerDB fixture: NOPM/TPM, virtual users, the time profile, and
// every failed or untrusted run with its reason.
func TestParseFixtures(t *testing.T) {
	cases := map[string]want{
		"docs-v6.0-mariadb-cli-run-with-jobs-json-result.txt": {verdict: results.Succeeded, nopm: 128176, tpm: 298394, vus: "24", points: 43},
		"docs-v6.0-pg-xtprof-time-profile-report.txt":         {verdict: results.Failed, reason: "no TEST RESULT", profile: [2]float64{0.391, 0.542}},
		"mysql-400wh-100vu-ssl-cipher-allwh.txt":              {verdict: results.Succeeded, nopm: 2335, tpm: 5432, vus: "100"},
		"mysql-print-dict-ssl-options.txt":                    {verdict: results.Failed, reason: "no TEST RESULT"},
		"mysql-v4.1-autopilot-hammerdb.log-incomplete-run.txt": {verdict: results.Succeeded, nopm: 7667, tpm: 23310, vus: "64",
			warning: "7 timed tests"},
		"mysql-v4.1-buildschema-1wh-diset-errors.txt": {verdict: results.Failed, reason: "refused 4 configuration command"},
		"mysql-v4.1-cli-sequence-1-64vu.txt":          {verdict: results.Invalid, reason: `refused 2 configuration command(s), so the test did not run with the settings asked for: Dictionary "tpcc" for MySQL exists but key "my_duration" doesn't`, nopm: 711, tpm: 2256, vus: "64", warning: "7 timed tests"},
		"mysql-v4.1-xtprof-hdbxtprofile.txt":          {verdict: results.Failed, reason: "no TEST RESULT", profile: [2]float64{90.448, 128.481}},
		"pg-400wh-100vu-raiseerror-vuser-failed.txt": {verdict: results.Invalid, reason: "95 virtual user(s) FINISHED FAILED (Vuser 2, 3, 4, 5, 6, 7, 8, 9 and 87 more: ERROR:  invalid transaction termination)",
			nopm: 2891, tpm: 6888, vus: "100"},
		"pg-400wh-10vu-timed-allwh-neword-errors.txt": {verdict: results.Succeeded, warning: "2 transaction error(s)", nopm: 2602, tpm: 6190, vus: "10"},
		"pg-print-dict.txt":                           {verdict: results.Failed, reason: "no TEST RESULT"},
		"pkb-mysql-v4.0-cli-4vu-20wh.txt":             {verdict: results.Succeeded, nopm: 8153, tpm: 24772, vus: "4"},
		"pkb-mysql-v4.0-etprof-vuser2-percentiles.txt": {verdict: results.Succeeded, nopm: 5614, tpm: 17145, vus: "4",
			profile: [2]float64{25.786, 36.411}, upperBound: true, warning: "upper bounds"},
		"pkb-mysql-v4.3-xtprof-tabs-stripped.txt":   {verdict: results.Failed, reason: "no TEST RESULT", profile: [2]float64{12.399, 14.197}},
		"pkb-pg-v4.3-transaction-counter-log.txt":   {verdict: results.Failed, reason: "no TEST RESULT", points: 99},
		"vc-mysql-v4.12-timed-allwh-xtprof-1vu.txt": {verdict: results.Succeeded, nopm: 11, tpm: 25, vus: "1", warning: "no report was found"},
		"vc-pg-v4.5-incorrect-no-result.txt":        {verdict: results.Failed, reason: "began a timed test but printed no TEST RESULT"},
		"vc-pg-v4.5-timed-vacuum-1vu.txt":           {verdict: results.Invalid, reason: "refused 1 configuration command", nopm: 11400, tpm: 26163, vus: "1"},
	}
	testutil.EachFixture(t, "hammerdb", cases, func(t *testing.T, name string, raw []byte, w want) {
		r := HammerDB{}.Parse(workloads.ParseInput{Output: raw})
		testutil.CheckVerdict(t, r, w.verdict, w.reason)
		if w.nopm > 0 {
			if got := testutil.MetricValue(t, r, "nopm", ""); got != w.nopm {
				t.Errorf("nopm = %v, want %v", got, w.nopm)
			}
			if got := testutil.MetricValue(t, r, "tpm", ""); got != w.tpm {
				t.Errorf("tpm = %v, want %v", got, w.tpm)
			}
			if r.Parameters["virtualUsers"] != w.vus {
				t.Errorf("virtualUsers = %q, want %q", r.Parameters["virtualUsers"], w.vus)
			}
		} else if _, ok := r.Get(results.Key{Name: "nopm"}); ok {
			t.Errorf("a NOPM from a file without TEST RESULT")
		}
		if w.profile[0] > 0 {
			p95, p99 := "latencyP95Millis", "latencyP99Millis"
			if w.upperBound {
				p95, p99 = "latencyP95UpperBoundMillis", "latencyP99UpperBoundMillis"
			}
			if got := testutil.MetricValue(t, r, p95, "NEWORD"); got != w.profile[0] {
				t.Errorf("NEWORD p95 = %v, want %v", got, w.profile[0])
			}
			if got := testutil.MetricValue(t, r, p99, "NEWORD"); got != w.profile[1] {
				t.Errorf("NEWORD p99 = %v, want %v", got, w.profile[1])
			}
			for _, proc := range []string{"NEWORD", "PAYMENT", "DELIVERY", "SLEV", "OSTAT"} {
				testutil.MetricValue(t, r, "calls", proc)
				testutil.MetricValue(t, r, "latencyMaxMillis", proc)
			}
		}
		if w.warning != "" && !strings.Contains(strings.Join(r.Warnings, "|"), w.warning) {
			t.Errorf("warnings %q do not mention %q", r.Warnings, w.warning)
		}
		if len(r.TimeSeries) != w.points {
			t.Errorf("%d transaction-counter points, want %d", len(r.TimeSeries), w.points)
		}
	})
}

// Transaction errors are a share of the transactions (TPM × timed
// minutes), judged against validity.maxErrorPercent as every tool's are:
// 2 errors in 30 minutes at 6,190 TPM used to make the test Invalid
// whatever the threshold.
func TestTransactionErrorsAreAShareOfTransactions(t *testing.T) {
	raw := testutil.ReadFixture(t, "hammerdb", "pg-400wh-10vu-timed-allwh-neword-errors.txt")
	const share = 100 * 2.0 / (6190 * 30)
	cases := map[string]struct {
		maxPercent float64
		want       results.Verdict
	}{
		"threshold 0 (the default)": {0, results.Invalid},
		"threshold 0.001":           {0.001, results.Invalid},
		"threshold 0.01":            {0.01, results.Succeeded},
		"threshold 50":              {50, results.Succeeded},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := HammerDB{}.Parse(workloads.ParseInput{Output: raw})
			if got := testutil.MetricValue(t, r, "errorPercent", ""); math.Abs(got-share) > 1e-12 {
				t.Errorf("errorPercent = %v, want %v", got, share)
			}
			results.ApplyThresholds(r, results.Thresholds{MaxErrorPercent: c.maxPercent})
			testutil.CheckVerdict(t, r, c.want, "")
		})
	}
	// Without a timed period (the log was cut) the share is unknown.
	cut := strings.Replace(string(raw), "Timing test period of 30 in minutes", "", 1)
	r := HammerDB{}.Parse(workloads.ParseInput{Output: []byte(cut)})
	testutil.CheckVerdict(t, r, results.Invalid, "share of transactions is unknown")
}

// The summary of all virtual users gives exact figures: every column of
// one transaction, from the v6.0 report.
func TestTimeProfileSummary(t *testing.T) {
	r := HammerDB{}.Parse(workloads.ParseInput{Output: testutil.ReadFixture(t, "hammerdb", "docs-v6.0-pg-xtprof-time-profile-report.txt")})
	for name, v := range map[string]float64{"calls": 264293, "latencyMinMillis": 0.256, "latencyAvgMillis": 0.594, "latencyMaxMillis": 430.422,
		"latencyP25Millis": 0.440, "latencyP50Millis": 0.497, "latencyP75Millis": 0.568, "latencyP95Millis": 0.689, "latencyP99Millis": 0.806, "timeRatioPercent": 9.363} {
		if got := testutil.MetricValue(t, r, name, "SLEV"); got != v {
			t.Errorf("SLEV %s = %v, want %v", name, got, v)
		}
	}
	if r.Parameters["timeProfileVirtualUsers"] != "4" {
		t.Errorf("parameters %v", r.Parameters)
	}
}

// HammerDB 4.12 refuses an unknown dictionary key without "Error:"
// (a real run, testdata/README.md) and runs the test anyway: the
// measurement is Invalid and says which setting was refused.
func TestUnknownKeyOfHammerDB412IsRefused(t *testing.T) {
	r := HammerDB{}.Parse(workloads.ParseInput{Output: readTestdata(t, "real-4.12-pg15-2vu-refused-key.log")})
	testutil.CheckVerdict(t, r, results.Invalid, `refused 1 configuration command(s), so the test did not run with the settings asked for: Dictionary "tpcc" for PostgreSQL exists but key "pg_prepared" doesn't`)
	if got := testutil.MetricValue(t, r, "nopm", ""); got != 70544 {
		t.Errorf("NOPM %v, want HammerDB's 70544", got)
	}
}

// Every form of diset's refusal that does not begin with "Error:" (4.x's
// gencli.tcl and older releases) makes the measurement Invalid.
func TestDisetRefusalsWithoutError(t *testing.T) {
	ok := string(readTestdata(t, "real-4.12-pg15-2vu-rampup1-duration1.log"))
	for _, refusal := range []string{
		`Dictionary "tpcx" for PostgreSQL does not exist`,
		`Dictionary "tpcc" for PostgreSQL exists but key "pg_k" doesn't`,
		`Dictionary "tpcc" for PostgreSQL exists but key "pg_k" doesn't, key "pg_k" is in the "connection" dictionary`,
		`Failed to set Dictionary value: bad value`,
	} {
		out := strings.Replace(ok, "Script loaded", refusal+"\nScript loaded", 1)
		r := HammerDB{}.Parse(workloads.ParseInput{Output: []byte(out),
			Files: map[string][]byte{TimeProfileFile: readTestdata(t, "real-4.12-pg15-2vu-rampup1-duration1-hdbxtprofile.log")}})
		testutil.CheckVerdict(t, r, results.Invalid, refusal)
	}
}

// HammerDB 4.12's summary counts every call twice (a real run, see
// testdata/README.md: NEWORD 33,772 calls in the summary, 8,378 + 8,508 in
// the two users, a 95 % ratio): calls and ratios come from the virtual
// users, latencies from the summary; the profile covers the ramp-up, and
// the result says so.
func TestTimeProfileOfHammerDB412(t *testing.T) {
	r := HammerDB{}.Parse(workloads.ParseInput{
		Output: readTestdata(t, "real-4.12-pg15-2vu-rampup1-duration1.log"),
		Files:  map[string][]byte{TimeProfileFile: readTestdata(t, "real-4.12-pg15-2vu-rampup1-duration1-hdbxtprofile.log")}})
	testutil.CheckVerdict(t, r, results.Succeeded, "")
	for name, want := range map[string]float64{
		"nopm":                     7215,
		"calls[NEWORD]":            8378 + 8508,
		"calls[PAYMENT]":           8174 + 8361,
		"timeRatioPercent[NEWORD]": 94.978 * (56659.184 + 58972.361) / 231263.091,
		"latencyP99Millis[NEWORD]": 67.964,
		"latencyAvgMillis[NEWORD]": 6.847,
	} {
		key := results.Key{Name: name}
		if n, op, ok := strings.Cut(strings.TrimSuffix(name, "]"), "["); ok {
			key = results.Key{Name: n, Operation: op}
		}
		if got := testutil.MetricValue(t, r, key.Name, key.Operation); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for _, m := range r.Metrics {
		if m.Name == "timeRatioPercent" && m.Value > 100 {
			t.Errorf("%s is %v%%", m.Key(), m.Value)
		}
	}
	for _, w := range []string{"counts each call twice", "covers the 1-minute ramp-up"} {
		if !strings.Contains(strings.Join(r.Warnings, "|"), w) {
			t.Errorf("warnings %q do not say %q", r.Warnings, w)
		}
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Without the summary (per-user sections only) calls add up, the average
// is weighted, and percentiles are the largest of any user: upper bounds.
func TestTimeProfileWithoutSummaryIsAnUpperBound(t *testing.T) {
	raw := string(testutil.ReadFixture(t, "hammerdb", "docs-v6.0-pg-xtprof-time-profile-report.txt"))
	perVU, _, found := strings.Cut(raw, ">>>>> SUMMARY")
	if !found {
		t.Fatal("fixture changed: no summary section")
	}
	r := HammerDB{}.Parse(workloads.ParseInput{Output: []byte(perVU)})
	if got := testutil.MetricValue(t, r, "calls", "NEWORD"); got != 656700+654605+670116+657082 {
		t.Errorf("calls %v", got)
	}
	if got := testutil.MetricValue(t, r, "latencyP99UpperBoundMillis", "NEWORD"); got != 0.545 {
		t.Errorf("p99 upper bound %v, want the largest user's 0.545", got)
	}
	if _, ok := r.Get(results.Key{Name: "latencyP99Millis", Operation: "NEWORD"}); ok {
		t.Error("per-user percentiles were reported as if they were exact")
	}
}

// The time profile is read from the file HammerDB wrote when the log does
// not hold it.
func TestTimeProfileFromResultFile(t *testing.T) {
	out := testutil.ReadFixture(t, "hammerdb", "vc-mysql-v4.12-timed-allwh-xtprof-1vu.txt")
	prof := testutil.ReadFixture(t, "hammerdb", "mysql-v4.1-xtprof-hdbxtprofile.txt")
	r := HammerDB{}.Parse(workloads.ParseInput{Output: out, Files: map[string][]byte{TimeProfileFile: prof}})
	testutil.CheckVerdict(t, r, results.Succeeded, "")
	if got := testutil.MetricValue(t, r, "latencyP95Millis", "PAYMENT"); got != 68.851 {
		t.Errorf("PAYMENT p95 %v", got)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "covers the 2-minute ramp-up") {
		t.Errorf("warnings %v, want only the one that the profile covers the ramp-up", r.Warnings)
	}
}

// Both word orders of TEST RESULT.
func TestOldWordOrder(t *testing.T) {
	r := HammerDB{}.Parse(workloads.ParseInput{Output: []byte("Vuser 1:Beginning rampup time of 1 minutes\nVuser 1:3 Active Virtual Users configured\nVuser 1:TEST RESULT : System achieved 24772 MySQL TPM at 8153 NOPM\nVuser 1:FINISHED SUCCESS\n")})
	testutil.CheckVerdict(t, r, results.Succeeded, "")
	if testutil.MetricValue(t, r, "nopm", "") != 8153 || testutil.MetricValue(t, r, "tpm", "") != 24772 {
		t.Errorf("metrics %+v", r.Metrics)
	}
}

// TLS requested: every virtual user must report a cipher. An empty one
// (or none at all) makes the run invalid; the fixture run over TLS passes.
func TestTLSCipherCheck(t *testing.T) {
	base := string(testutil.ReadFixture(t, "hammerdb", "vc-mysql-v4.12-timed-allwh-xtprof-1vu.txt"))
	if !strings.Contains(base, "mysql_ssl                = false") {
		t.Fatal("fixture changed: no mysql_ssl line")
	}
	withTLS := strings.Replace(base, "mysql_ssl                = false", "mysql_ssl                = true", 1)
	r := HammerDB{}.Parse(workloads.ParseInput{Output: []byte(withTLS)})
	testutil.CheckVerdict(t, r, results.Invalid, "2 virtual user(s) connected without encryption (empty Ssl_cipher: Vuser 1, 2)")
	if testutil.MetricValue(t, r, "nopm", "") != 11 {
		t.Error("an invalid run must keep its numbers")
	}

	noLines := strings.ReplaceAll(withTLS, "Ssl_cipher", "Connected")
	r = HammerDB{}.Parse(workloads.ParseInput{Output: []byte(noLines)})
	testutil.CheckVerdict(t, r, results.Invalid, "no virtual user printed its Ssl_cipher")

	ok := strings.ReplaceAll(withTLS, "Ssl_cipher\n", "Ssl_cipher TLS_AES_256_GCM_SHA384\n")
	r = HammerDB{}.Parse(workloads.ParseInput{Output: []byte(ok)})
	testutil.CheckVerdict(t, r, results.Succeeded, "")
	if r.Parameters["tlsCipher"] != "TLS_AES_256_GCM_SHA384" {
		t.Errorf("parameters %v", r.Parameters)
	}
	// As our scripts set it: diset prints the change.
	changed := strings.Replace(ok, " mysql_ssl                = true\n", "", 1)
	changed = "Changed connection:mysql_ssl from false to true for MySQL\n" + changed
	r = HammerDB{}.Parse(workloads.ParseInput{Output: []byte(changed)})
	testutil.CheckVerdict(t, r, results.Succeeded, "")
	if r.Parameters["tlsRequested"] != "true" {
		t.Errorf("the diset line did not count as a TLS request: %v", r.Parameters)
	}
}

func TestTimingDataIncomplete(t *testing.T) {
	raw := string(testutil.ReadFixture(t, "hammerdb", "pkb-mysql-v4.0-cli-4vu-20wh.txt"))
	raw = strings.Replace(raw, "Vuser 1:FINISHED SUCCESS", "Vuser 1:Timing Data Incomplete\nVuser 1:FINISHED SUCCESS", 1)
	r := HammerDB{}.Parse(workloads.ParseInput{Output: []byte(raw)})
	testutil.CheckVerdict(t, r, results.Invalid, "Timing Data Incomplete")
}

// A schema build is judged by its output, since hammerdbcli exits 0 anyway.
func TestParsePrepare(t *testing.T) {
	build := testutil.ReadFixture(t, "hammerdb", "mysql-v4.1-buildschema-1wh-diset-errors.txt")
	reasons := HammerDB{}.ParsePrepare(workloads.ParseInput{Output: build})
	if len(reasons) != 1 || !strings.Contains(reasons[0], "refused a configuration command: Invalid number of arguments") {
		t.Errorf("reasons %q", reasons)
	}
	clean := strings.ReplaceAll(string(build), "Error: Invalid number of arguments\n", "")
	if reasons := (HammerDB{}).ParsePrepare(workloads.ParseInput{Output: []byte(clean)}); len(reasons) != 0 {
		t.Errorf("a clean build failed: %q", reasons)
	}
	cut := strings.Split(clean, "Vuser 1:CREATING TPCC STORED PROCEDURES")[0]
	if reasons := (HammerDB{}).ParsePrepare(workloads.ParseInput{Output: []byte(cut)}); len(reasons) != 1 || !strings.Contains(reasons[0], "SCHEMA COMPLETE") {
		t.Errorf("a cut-short build: %q", reasons)
	}
}

// The seed settings: 1 and 100 warehouses, 20/40 VU, 2 min ramp-up,
// 5 min run, all warehouses, time profile.
func seed(db benchv1.HammerDBDatabase, wh int32) *benchv1.WorkloadSpec {
	return &benchv1.WorkloadSpec{HammerDB: &benchv1.HammerDBWorkload{Database: db, Warehouses: wh, BuildVirtualUsers: min(wh, 8),
		VirtualUsers: []int32{20, 40}, RampUp: &metav1.Duration{Duration: 2 * time.Minute}, Duration: &metav1.Duration{Duration: 5 * time.Minute}, AllWarehouses: true,
		Settings: map[string]string{prefix(db) + "_prepared": "false"}}}
}

func prefix(db benchv1.HammerDBDatabase) string {
	if db == benchv1.HammerDBMySQL {
		return "mysql"
	}
	return "pg"
}

func secretKey(name, key string) *corev1.SecretKeySelector {
	return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}
}

func TestGoldenScripts(t *testing.T) {
	pg := pod.Endpoint{Host: "bench-pg-rw.perf.svc", Port: 5432, Database: "app",
		Username: secretKey("bench-pg-app", "username"), Password: secretKey("bench-pg-app", "password"),
		Superuser: secretKey("bench-pg-superuser", "username"), SuperuserPassword: secretKey("bench-pg-superuser", "password")}
	spec := seed(benchv1.HammerDBPostgres, 100)
	spec.HammerDB.Settings = map[string]string{"pg_vacuum": "true"}
	for name, body := range Scripts(spec.HammerDB, pg) {
		testutil.Golden(t, "pg-100wh-"+name, body)
	}
	my := pod.Endpoint{Host: "bench-mysql.perf.svc", Port: 3306, TLS: true, CASecret: "bench-mysql-tls", ClientCertSecret: "bench-mysql-client-tls",
		Username: secretKey("bench-mysql-credentials", "username"), Password: secretKey("bench-mysql-credentials", "password")}
	spec = seed("mysql", 1)
	spec.HammerDB.Settings = map[string]string{"mysql_storage_engine": "innodb"}
	for name, body := range Scripts(spec.HammerDB, my) {
		testutil.Golden(t, "mysql-1wh-tls-"+name, body)
	}
}

func TestInvocations(t *testing.T) {
	ep := pod.Endpoint{Host: "db", Port: 5432, Username: secretKey("s", "username"), Password: secretKey("s", "password")}
	spec := seed(benchv1.HammerDBPostgres, 1)
	h := HammerDB{}
	steps := h.Steps(spec)
	if len(steps) != 2 || steps[1].Name != "vu=40" {
		t.Fatalf("steps %+v", steps)
	}
	prep := h.Prepare(spec, ep)
	if strings.Join(prep.Command, " ") != "./hammerdbcli auto /etc/dbperf/workload/build.tcl" ||
		strings.Join(prep.ResultFiles, " ") != "/dbperf/out/hammer.DB" || prep.Env[0].Name != "TMP" || prep.Env[0].Value != pod.OutputDir {
		t.Errorf("prepare %+v", prep)
	}
	run := h.Run(spec, ep, steps[1])
	if strings.Join(run.Command, " ") != "./hammerdbcli auto /etc/dbperf/workload/run-1.tcl" ||
		strings.Join(run.ResultFiles, " ") != "/dbperf/out/hammer.DB /dbperf/out/hdbxtprofile.log" {
		t.Errorf("run %+v", run)
	}
	if len(run.Files) != 3 || !strings.Contains(run.Files["run-1.tcl"], "vuset vu 40") {
		t.Errorf("files %v", workloads.SortedKeys(run.Files))
	}
	if strings.Join(run.SecretEnv, ",") != pod.EnvPassword || run.Env[0].Name != "TMP" || run.Env[0].Value != pod.OutputDir {
		t.Errorf("env %+v secret %v", run.Env, run.SecretEnv)
	}
	for _, body := range run.Files {
		if strings.Contains(body, "password") && !strings.Contains(body, "$::env(") {
			t.Errorf("a script holds a literal password:\n%s", body)
		}
	}
}

func TestValidate(t *testing.T) {
	spec := seed(benchv1.HammerDBPostgres, 4)
	spec.HammerDB.BuildVirtualUsers = 5
	spec.HammerDB.Settings = map[string]string{"pg_duration": "9", "mysql_prepared": "true", "pg_vacuum": "true; exec rm", "Bad": "x"}
	errs := HammerDB{}.Validate(spec, field.NewPath("spec", "workload"))
	got := errs.ToAggregate().Error()
	for _, want := range []string{
		"spec.workload.hammerdb.buildVirtualUsers: Invalid value: 5: must not exceed warehouses",
		"spec.workload.hammerdb.settings[pg_duration]", "set by the operator",
		"spec.workload.hammerdb.settings[mysql_prepared]", "keys of database postgres start with pg_",
		"spec.workload.hammerdb.settings[pg_vacuum]", "without Tcl special characters",
		"spec.workload.hammerdb.settings[Bad]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q lack %q", got, want)
		}
	}
	if errs := (HammerDB{}).Validate(seed("mysql", 100), field.NewPath("w")); len(errs) != 0 {
		t.Errorf("the seed setting is refused: %v", errs)
	}
}

// Every dictionary key the generated scripts set exists in HammerDB's own
// dictionary, as `print dict` shows it (fixtures from HammerDB 4.7), in the
// section the script names: a misspelt key would be refused at run time
// (and make the run Invalid) instead of being caught here.
func TestScriptKeysExistInHammerDBsDictionary(t *testing.T) {
	for _, c := range []struct {
		db   benchv1.HammerDBDatabase
		dict string
		ep   pod.Endpoint
	}{
		{benchv1.HammerDBPostgres, "pg-print-dict.txt", pod.Endpoint{Host: "h", Port: 5432, TLS: true, CASecret: "ca",
			Superuser: secretKey("s", "username"), SuperuserPassword: secretKey("s", "password")}},
		{"mysql", "mysql-print-dict-ssl-options.txt", pod.Endpoint{Host: "h", Port: 3306, TLS: true, CASecret: "ca", ClientCertSecret: "client"}},
		{"mysql", "mysql-print-dict-ssl-options.txt", pod.Endpoint{Host: "h", Port: 3306, TLS: true}},
		{"mysql", "mysql-print-dict-ssl-options.txt", pod.Endpoint{Host: "h", Port: 3306, TLS: true, TLSCipher: "ECDHE-RSA-AES128-GCM-SHA256"}},
	} {
		known := map[string]string{} // key → section
		section := ""
		for _, line := range workloads.Lines(testutil.ReadFixture(t, "hammerdb", c.dict)) {
			f := strings.Fields(line)
			switch {
			case len(f) == 2 && f[1] == "{":
				section = f[0]
			case len(f) >= 2 && f[1] == "=":
				known[f[0]] = section
			}
		}
		if len(known) < 20 {
			t.Fatalf("%s: only %d keys read", c.dict, len(known))
		}
		spec := seed(c.db, 10)
		spec.HammerDB.Settings = nil
		for name, body := range Scripts(spec.HammerDB, c.ep) {
			for _, line := range strings.Split(body, "\n") {
				f := strings.Fields(line)
				if len(f) < 3 || f[0] != "diset" {
					continue
				}
				if sec, ok := known[f[2]]; !ok || sec != f[1] {
					t.Errorf("%s %s: diset %s %s — HammerDB's dictionary has it in %q (known: %v)", c.db, name, f[1], f[2], sec, ok)
				}
			}
		}
	}
}

// PostgreSQL over two-way TLS: Pgtcl's libpq finds the CA and the client
// certificate in its variables (pg_sslmode in the script sets the mode).
func TestPostgresTwoWayTLSEnvironment(t *testing.T) {
	spec := seed(benchv1.HammerDBPostgres, 1)
	inv := HammerDB{}.Run(spec, pod.Endpoint{Host: "h", Port: 5432, TLS: true, CASecret: "ca", ClientCertSecret: "client"}, HammerDB{}.Steps(spec)[0])
	env := map[string]string{}
	for _, e := range inv.Env {
		env[e.Name] = e.Value
	}
	want := map[string]string{"PGSSLROOTCERT": pod.CAFile, "PGSSLCERT": pod.ClientCertFile, "PGSSLKEY": pod.ClientKeyFile}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if _, ok := env["PGSSLMODE"]; ok {
		t.Error("PGSSLMODE is set beside the script's pg_sslmode")
	}
	if !strings.Contains(inv.Files[runScript(0)], "diset connection pg_sslmode verify-full") {
		t.Error("the script does not verify the server with the CA")
	}
}

// MySQL over TLS without a CA: HammerDB turns TLS off, saying so only in a
// message box, unless its capath exists and no file is named; the script
// names the output directory (which the runner makes) and blanks the files.
func TestMySQLTLSWithoutCAKeepsTLSOn(t *testing.T) {
	spec := seed(benchv1.HammerDBMySQL, 1)
	body := Scripts(spec.HammerDB, pod.Endpoint{Host: "h", Port: 3306, TLS: true})[runScript(0)]
	for _, want := range []string{"diset connection mysql_ssl true\n", "diset connection mysql_ssl_linux_capath " + pod.OutputDir + "\n",
		"diset connection mysql_ssl_ca {}\n", "diset connection mysql_ssl_cert {}\n", "diset connection mysql_ssl_key {}\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("the script lacks %q:\n%s", want, body)
		}
	}
}

// The generated scripts are valid Tcl for a real Tcl interpreter (HammerDB's
// CLI is one): with HammerDB's commands defined to print their arguments,
// tclsh runs every script, the credentials arrive from the environment as
// single literal words (a password with spaces, brackets and dollars stays
// intact and unevaluated), and nothing else is evaluated.
func TestScriptsRunInTclsh(t *testing.T) {
	tclsh, err := exec.LookPath("tclsh")
	if err != nil {
		t.Fatal("tclsh is not installed (bash hack/install-deps.sh installs tcl)")
	}
	ep := pod.Endpoint{Host: "bench-pg-rw.perf.svc", Port: 5432, Database: "app",
		Username: secretKey("s", "username"), Password: secretKey("s", "password"),
		Superuser: secretKey("su", "username"), SuperuserPassword: secretKey("su", "password")}
	spec := seed(benchv1.HammerDBPostgres, 4)
	spec.HammerDB.Settings = map[string]string{"pg_vacuum": "true"}
	const password = `p a$s[exec touch /tmp/pwned]{x`
	stubs := `foreach cmd {dbset diset loadscript vuset vucreate tcstart vurun tcstop vudestroy buildschema} {
  proc $cmd {args} "puts \"CALL $cmd|\[join \$args |\]\""
}
`
	for name, body := range Scripts(spec.HammerDB, ep) {
		file := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(file, []byte(stubs+body), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(tclsh, file)
		cmd.Env = append(os.Environ(), pod.EnvUsername+"=bench", pod.EnvPassword+"="+password,
			"DBPERF_TARGET_SUPERUSER=postgres", "DBPERF_TARGET_SUPERUSER_PASSWORD="+password)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: tclsh: %v\n%s", name, err, out)
		}
		calls := string(out)
		want := "CALL diset|tpcc|pg_pass|" + password + "\n"
		if !strings.Contains(calls, want) || !strings.Contains(calls, "CALL diset|tpcc|pg_superuserpass|"+password+"\n") {
			t.Errorf("%s: the password did not arrive as one literal word (want %q):\n%s", name, want, calls)
		}
		if !strings.Contains(calls, "CALL diset|connection|pg_host|bench-pg-rw.perf.svc\n") {
			t.Errorf("%s:\n%s", name, calls)
		}
		if name == "run-1.tcl" && !strings.Contains(calls, "CALL vuset|vu|40\n") {
			t.Errorf("%s does not set 40 virtual users:\n%s", name, calls)
		}
	}
	if _, err := os.Stat("/tmp/pwned"); err == nil {
		t.Error("a password was evaluated as Tcl")
	}
}

// A capacity level is a step the sweep does not hold: its own virtual
// users (the level, not the sweep's first count, which it once ran), and a
// confirmation's or soak's duration in whole minutes rounded up.
func TestCapacityLevelsRunTheirOwnVirtualUsers(t *testing.T) {
	ep := pod.Endpoint{Host: "db", Port: 5432, Username: secretKey("s", "username"), Password: secretKey("s", "password")}
	spec := seed(benchv1.HammerDBPostgres, 1)
	spec.HammerDB.VirtualUsers = []int32{8}
	h := HammerDB{}
	level := workloads.Step{Name: "vu=32", Params: map[string]int32{"vu": 32}}
	run := h.Run(spec, ep, level)
	body := run.Files[levelScript]
	if strings.Join(run.Command, " ") != "./hammerdbcli auto /etc/dbperf/workload/run-level.tcl" || !strings.Contains(body, "vuset vu 32\n") {
		t.Fatalf("level vu=32: %q\n%s", run.Command, body)
	}
	soak := workloads.Step{Name: "vu=24,soak", Params: map[string]int32{"vu": 24, workloads.DurationParameter: 86401}}
	body = h.Run(spec, ep, soak).Files[levelScript]
	if !strings.Contains(body, "vuset vu 24\n") || !strings.Contains(body, "diset tpcc pg_duration 1441\n") {
		t.Fatalf("a soak of 24 h 1 s:\n%s", body)
	}
	// The sweep's own step still runs its own script.
	if run := h.Run(spec, ep, h.Steps(spec)[0]); strings.Join(run.Command, " ") != "./hammerdbcli auto /etc/dbperf/workload/run-0.tcl" {
		t.Errorf("the sweep's step: %q", run.Command)
	}
}
