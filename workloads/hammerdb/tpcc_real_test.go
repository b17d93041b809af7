package hammerdb

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/certs"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// tpccCase is one server and connection of the TPROC-C tests.
type tpccCase struct {
	db  benchv1.HammerDBDatabase
	tls bool // two-way TLS, required by the server
	vus []int32
}

// The real hammerdbcli 4.12 through the runner, with the scripts and
// environment the operator builds, against Debian's PostgreSQL and MariaDB,
// plain and over two-way TLS that the server requires: the schema build
// (1 warehouse) and timed TPROC-C tests. Each number HammerDB reports is
// checked against the server's own counters taken around the run:
//   - NOPM × minutes can never exceed the new orders the server committed
//     (the sum of district.d_next_o_id), which also bounds it from above
//     with the ramp-up and the moments before and after the measured period;
//   - TPM × minutes can never exceed the transactions the server counted
//     (pg_stat_database commits and rollbacks; MariaDB's Com_commit and
//     Com_rollback), the counters HammerDB itself reads;
//   - the result's NOPM and TPM are those of HammerDB's own TEST RESULT line.
//
// Over TLS the server refuses clear text and clients without a certificate,
// so a run that succeeds used the client certificate; for MariaDB every
// virtual user's negotiated cipher is checked by the parser as well.
//
// `make test` runs the short form: the two TLS cases (PostgreSQL at 4
// virtual users, MariaDB at 2), no ramp-up, a 1-minute test, side by side
// (about 2.5 minutes; plain PostgreSQL runs in the e2e). `make hammerdb-full`
// (DBPERF_HAMMERDB_FULL=1) runs the form: plain and TLS on both
// servers, a 1-minute ramp-up and a 1-minute test at 2 and 4 virtual users
// in every case (about 15 minutes).
func TestRealTPCC(t *testing.T) {
	home := testutil.NeedEnv(t, "HAMMERDB_HOME") // HammerDB 4.12 built by hack/build-tools.sh
	full := os.Getenv("DBPERF_HAMMERDB_FULL") != ""
	rampUp := time.Duration(0)
	cases := map[string]tpccCase{
		"postgres":     {db: benchv1.HammerDBPostgres, vus: []int32{2}},
		"postgres-tls": {db: benchv1.HammerDBPostgres, tls: true, vus: []int32{4}},
		"mariadb":      {db: benchv1.HammerDBMySQL, vus: []int32{4}},
		"mariadb-tls":  {db: benchv1.HammerDBMySQL, tls: true, vus: []int32{2}},
	}
	families := [][]string{{"postgres-tls"}, {"mariadb-tls"}}
	if full {
		rampUp = time.Minute
		for name, c := range cases {
			c.vus = []int32{2, 4}
			cases[name] = c
		}
		families = [][]string{{"postgres", "postgres-tls"}, {"mariadb", "mariadb-tls"}}
	}
	// One server family at a time per goroutine: PostgreSQL's cases beside
	// MariaDB's.
	for _, family := range families {
		t.Run(strings.Join(family, "+"), func(t *testing.T) {
			t.Parallel()
			for _, name := range family {
				t.Run(name, func(t *testing.T) { tpcc(t, home, cases[name], rampUp) })
			}
		})
	}
}

// tpccServer is what a case needs of its server.
type tpccServer struct {
	ep      pod.Endpoint
	secrets map[string]string // environment of the pod: credentials
	// neworders is the sum of district.d_next_o_id; transactions is the
	// server's transaction counter HammerDB reads.
	neworders, transactions func() float64
}

func tpcc(t *testing.T, home string, c tpccCase, rampUp time.Duration) {
	dir, err := os.MkdirTemp("", "dbperf-tpcc-") // servers run as their own users: not a 0700 test directory
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755)
	tlsDir := filepath.Join(dir, "tls") // stands for pod.TLSDir
	var client map[string][]byte
	var server map[string][]byte
	if c.tls {
		server, client, err = certs.ServerSecrets("tpcc", []string{"localhost", "127.0.0.1"}, "bench", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		writeFiles(t, tlsDir, client, 0o600)
	}
	var srv tpccServer
	if c.db == benchv1.HammerDBPostgres {
		srv = postgresServer(t, c.tls, server)
	} else {
		srv = mariadbServer(t, filepath.Join(dir, "mariadb"), c.tls, server)
	}
	if c.tls {
		srv.ep.TLS, srv.ep.CASecret, srv.ep.ClientCertSecret = true, "ca", "client"
	}

	spec := seed(c.db, 1)
	w := spec.HammerDB
	w.VirtualUsers = c.vus
	w.RampUp, w.Duration = &metav1.Duration{Duration: rampUp}, &metav1.Duration{Duration: time.Minute}
	if c.db == benchv1.HammerDBPostgres {
		// The seed's pg_prepared is not a key of HammerDB 4.12's PostgreSQL
		// dictionary (a refused key makes the run Invalid).
		w.Settings = map[string]string{"pg_dritasnap": "false"}
	}
	if errs := (HammerDB{}).Validate(spec, nil); len(errs) > 0 {
		t.Fatal(errs)
	}

	// The schema build, as the prepare Job runs it.
	r, log := runHammerDB(t, home, dir, tlsDir, *HammerDB{}.Prepare(spec, srv.ep), srv.secrets, true, 5*time.Minute)
	if r.Verdict != results.Succeeded {
		t.Fatalf("schema build: %s %v\n%s", r.Verdict, r.Reasons, tailOf(log))
	}
	if got := srv.neworders(); got != 10*3001 {
		// 1 warehouse: 10 districts whose next order id is 3001.
		t.Fatalf("after the build, the districts' next order ids sum to %v, want %d", got, 10*3001)
	}

	resultLine := regexp.MustCompile(`TEST RESULT : System achieved ([0-9]+) NOPM from ([0-9]+) (\S+) TPM`)
	for _, step := range (HammerDB{}).Steps(spec) {
		orders0, tx0 := srv.neworders(), srv.transactions()
		start := time.Now()
		r, log := runHammerDB(t, home, dir, tlsDir, HammerDB{}.Run(spec, srv.ep, step), srv.secrets, false, rampUp+4*time.Minute)
		elapsed := time.Since(start)
		orders, tx := srv.neworders()-orders0, srv.transactions()-tx0
		if r.Verdict != results.Succeeded {
			t.Errorf("%s: %s %v\n%s", step.Name, r.Verdict, r.Reasons, tailOf(log))
			continue
		}
		m := resultLine.FindStringSubmatch(log)
		if m == nil {
			t.Errorf("%s: no TEST RESULT line in HammerDB's output:\n%s", step.Name, tailOf(log))
			continue
		}
		toolNOPM, _ := strconv.ParseFloat(m[1], 64)
		toolTPM, _ := strconv.ParseFloat(m[2], 64)
		nopm, tpm := testutil.MetricValue(t, r, "nopm", ""), testutil.MetricValue(t, r, "tpm", "")
		if nopm != toolNOPM || tpm != toolTPM {
			t.Errorf("%s: result NOPM %v TPM %v, HammerDB said %v and %v", step.Name, nopm, tpm, toolNOPM, toolTPM)
		}
		// HammerDB takes its counts at the start and the end of the
		// measured minute; the server's were taken before the tool started
		// and after it stopped.
		if nopm <= 0 || nopm > orders {
			t.Errorf("%s: NOPM %v over 1 minute, but the server committed %v new orders in the whole run", step.Name, nopm, orders)
		}
		if tpm <= 0 || tpm > tx {
			t.Errorf("%s: TPM %v over 1 minute, but the server counted %v transactions in the whole run", step.Name, tpm, tx)
		}
		// From above: the run's minutes outside the measured one (ramp-up,
		// start and stop of the virtual users) at no more than 3 times the
		// measured rate, plus the orders of the first seconds.
		outside := elapsed.Minutes() - 1
		if limit := nopm*(1+3*outside) + 200; orders > limit {
			t.Errorf("%s: the server committed %v new orders in %s, more than NOPM %v allows (%v)", step.Name, orders, elapsed.Round(time.Second), nopm, limit)
		}
		if c.tls && c.db == benchv1.HammerDBMySQL && !strings.Contains(log, "Ssl_cipher") {
			t.Errorf("%s: no virtual user printed its Ssl_cipher over TLS", step.Name)
		}
		t.Logf("%s %s: NOPM %v TPM %v (HammerDB's line: %s); server: %v new orders, %v transactions in %s",
			c.db, step.Name, nopm, tpm, strings.TrimSpace(m[0]), orders, tx, elapsed.Round(time.Second))
	}
}

func postgresServer(t *testing.T, tls bool, server map[string][]byte) tpccServer {
	var pg testutil.Postgres
	if tls {
		pg = testutil.StartPostgresTLS(t, localdb.PostgresTLS{ServerCert: server["tls.crt"], ServerKey: server["tls.key"], ClientCA: server["ca.crt"]})
		// The server refuses clear text, and TLS without a client certificate.
		for _, mode := range []string{"disable", "require"} {
			psql := exec.Command(filepath.Join(pg.BinDir, "psql"), "-c", "SELECT 1")
			psql.Env = append(append(os.Environ(), pg.Env()...), "PGSSLMODE="+mode)
			if out, err := psql.CombinedOutput(); err == nil {
				t.Fatalf("PostgreSQL accepted a connection with sslmode %s and no client certificate: %s", mode, out)
			}
		}
	} else {
		pg = testutil.StartPostgres(t)
	}
	query := func(db, q string) float64 {
		t.Helper()
		out, err := pg.QueryIn(db, q)
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseFloat(out, 64)
		if err != nil {
			t.Fatalf("%s: %q", q, out)
		}
		return v
	}
	return tpccServer{
		ep: pod.Endpoint{Host: "127.0.0.1", Port: int32(pg.Port), Database: pg.Database,
			Username: secretKey("s", "username"), Password: secretKey("s", "password"),
			Superuser: secretKey("s", "superuser"), SuperuserPassword: secretKey("s", "superuser-password")},
		secrets: map[string]string{pod.EnvUsername: pg.User, pod.EnvPassword: pg.Password,
			pod.EnvSuperuser: pg.User, pod.EnvSuperuserPassword: pg.Password},
		neworders: func() float64 {
			if query("postgres", "SELECT count(*) FROM pg_database WHERE datname = 'tpcc'") == 0 {
				return 0
			}
			return query("tpcc", "SELECT coalesce(sum(d_next_o_id), 0) FROM district")
		},
		transactions: func() float64 {
			return query("postgres", "SELECT sum(xact_commit + xact_rollback) FROM pg_stat_database")
		},
	}
}

func mariadbServer(t *testing.T, dir string, tls bool, server map[string][]byte) tpccServer {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var args []string
	require := ""
	if tls {
		sdir := filepath.Join(dir, "server-tls")
		writeFiles(t, sdir, server, 0o644)
		args = []string{"--require-secure-transport=ON", "--ssl-ca=" + sdir + "/ca.crt", "--ssl-cert=" + sdir + "/tls.crt", "--ssl-key=" + sdir + "/tls.key"}
		require = " REQUIRE X509"
	}
	// A buffer pool that holds one warehouse; no flush at each commit (as
	// PostgreSQL runs here with fsync off).
	db := testutil.StartMariaDB(t, dir, append(args, "--innodb-buffer-pool-size=256M", "--max-connections=200",
		"--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0")...)
	password := "pw-" + strconv.Itoa(os.Getpid())
	if out, err := db.Client("--socket="+db.Socket, "-e", "CREATE USER 'bench'@'%' IDENTIFIED BY '"+password+"'"+require+"; GRANT ALL ON *.* TO 'bench'@'%' WITH GRANT OPTION;"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if tls {
		// The server refuses clear text.
		if out, err := db.Client("--protocol=TCP", "--host=127.0.0.1", "--port="+strconv.Itoa(db.Port), "--user=bench", "--password="+password, "--skip-ssl", "-e", "SELECT 1"); err == nil {
			t.Fatalf("MariaDB accepted clear text: %s", out)
		}
	}
	query := func(q string) float64 {
		t.Helper()
		out, err := db.Client("--socket="+db.Socket, "-N", "-B", "-e", q)
		if err != nil {
			t.Fatalf("%s: %v\n%s", q, err, out)
		}
		f := strings.Fields(out)
		if len(f) == 0 {
			t.Fatalf("%s: no answer", q)
		}
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("%s: %q", q, out)
		}
		return v
	}
	return tpccServer{
		ep:      pod.Endpoint{Host: "127.0.0.1", Port: int32(db.Port), Username: secretKey("s", "username"), Password: secretKey("s", "password")},
		secrets: map[string]string{pod.EnvUsername: "bench", pod.EnvPassword: password},
		neworders: func() float64 {
			if query("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'tpcc' AND table_name = 'district'") == 0 {
				return 0
			}
			return query("SELECT coalesce(sum(d_next_o_id), 0) FROM tpcc.district")
		},
		transactions: func() float64 {
			return query("SELECT sum(variable_value) FROM information_schema.global_status WHERE variable_name IN ('COM_COMMIT', 'COM_ROLLBACK')")
		},
	}
}

// runHammerDB runs an invocation through the runner with the real
// hammerdbcli, as a pod of the image would: the invocation's files in a
// directory standing for FilesDir, results in one standing for OutputDir,
// TLS files in tlsDir, the secrets in the environment, and hammerdbcli run
// from its installation directory (the image's working directory).
func runHammerDB(t *testing.T, home, dir, tlsDir string, inv pod.Invocation, secrets map[string]string, prepare bool, timeout time.Duration) (*results.Result, string) {
	t.Helper()
	job, err := os.MkdirTemp(dir, "job-")
	if err != nil {
		t.Fatal(err)
	}
	files, out := filepath.Join(job, "files"), filepath.Join(job, "out")
	writeFiles(t, files, nil, 0o644)
	local := func(s string) string {
		return strings.NewReplacer(pod.FilesDir, files, pod.OutputDir, out, pod.TLSDir, tlsDir).Replace(s)
	}
	for name, body := range inv.Files {
		if err := os.WriteFile(filepath.Join(files, name), []byte(local(body)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var script strings.Builder
	script.WriteString("#!/bin/sh\n")
	for _, e := range inv.Env {
		v := local(e.Value)
		if e.ValueFrom != nil {
			v = secrets[e.Name]
			if v == "" {
				t.Fatalf("no value for the secret variable %s", e.Name)
			}
		}
		fmt.Fprintf(&script, "export %s='%s'\n", e.Name, v)
	}
	fmt.Fprintf(&script, "cd '%s' && exec ./hammerdbcli \"$@\"\n", home)
	wrapper := filepath.Join(job, "hammerdbcli")
	if err := os.WriteFile(wrapper, []byte(script.String()), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := []string{wrapper}
	for _, a := range inv.Command[1:] {
		cmd = append(cmd, local(a))
	}
	var results []string
	for _, f := range inv.ResultFiles {
		results = append(results, local(f))
	}
	var log bytes.Buffer
	var secretValues []string
	for _, v := range secrets {
		secretValues = append(secretValues, v)
	}
	r := runner.Exec(context.Background(), runner.Options{Parser: HammerDB{}, Prepare: prepare, Command: cmd, ResultFiles: results,
		Timeout: timeout, Stdout: &log, SecretValues: secretValues})
	if strings.Contains(log.String(), secrets[pod.EnvPassword]) {
		t.Errorf("the password appears in the runner's output")
	}
	// DBPERF_HAMMERDB_RECORD=DIR keeps hammerdbcli's own output of every
	// timed test (the runner's lines left out): how testdata's real 4.12
	// recordings were made.
	if dir := os.Getenv("DBPERF_HAMMERDB_RECORD"); dir != "" && !prepare {
		var tool strings.Builder
		for _, line := range strings.SplitAfter(log.String(), "\n") {
			if !strings.HasPrefix(line, "[dbperf-runner]") {
				tool.WriteString(line)
			}
		}
		name := filepath.Join(dir, strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())+"-"+filepath.Base(inv.Command[len(inv.Command)-1]))
		if err := os.WriteFile(name+".txt", []byte(tool.String()), 0o644); err != nil {
			t.Error(err)
		}
		if profile, err := os.ReadFile(filepath.Join(out, TimeProfileFile)); err == nil {
			if err := os.WriteFile(name+"-"+TimeProfileFile, profile, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	return r, log.String()
}

func writeFiles(t *testing.T, dir string, files map[string][]byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), body, mode); err != nil {
			t.Fatal(err)
		}
	}
}

func tailOf(s string) string {
	if len(s) > 6000 {
		return "…" + s[len(s)-6000:]
	}
	return s
}

// The real hammerdbcli 4.12 runs an autopilot (spec.workload.hammerdb.
// autopilot: 1, then 3 virtual users, no ramp-up, a 1-minute test each)
// against Debian's PostgreSQL in one measurement: the result holds one
// stage per test, named by its virtual users, each over its own measured
// minute (the stages follow one another, a minute long each), with the
// NOPM and TPM HammerDB printed for that test and its transactions'
// percentiles from the time profile; the headline is the last test's, and
// the stages' new orders add up to no more than the server committed.
// Part of the full form (`make hammerdb-full`, about 3 minutes); `make
// test` parses a recording of it (TestAutopilotStagesOfARealRecording).
func TestRealAutopilotStages(t *testing.T) {
	home := testutil.NeedEnv(t, "HAMMERDB_HOME")
	if os.Getenv("DBPERF_HAMMERDB_FULL") == "" {
		t.Skip("the full form: DBPERF_HAMMERDB_FULL=1 (make hammerdb-full)")
	}
	dir, err := os.MkdirTemp("", "dbperf-tpcc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755)
	srv := postgresServer(t, false, nil)
	spec := seed(benchv1.HammerDBPostgres, 1)
	w := spec.HammerDB
	w.VirtualUsers, w.Autopilot = []int32{1, 3}, true
	w.RampUp, w.Duration = &metav1.Duration{}, &metav1.Duration{Duration: time.Minute}
	w.Settings = map[string]string{"pg_dritasnap": "false"}
	if errs := (HammerDB{}).Validate(spec, nil); len(errs) > 0 {
		t.Fatal(errs)
	}
	if r, log := runHammerDB(t, home, dir, "", *HammerDB{}.Prepare(spec, srv.ep), srv.secrets, true, 5*time.Minute); r.Verdict != results.Succeeded {
		t.Fatalf("schema build: %s %v\n%s", r.Verdict, r.Reasons, tailOf(log))
	}
	steps := HammerDB{}.Steps(spec)
	if len(steps) != 1 || steps[0].Name != AutopilotStep {
		t.Fatalf("steps %+v", steps)
	}
	orders0 := srv.neworders()
	r, log := runHammerDB(t, home, dir, "", HammerDB{}.Run(spec, srv.ep, steps[0]), srv.secrets, false, 6*time.Minute)
	orders := srv.neworders() - orders0
	checkAutopilot(t, r, log, []int32{1, 3})
	sum := 0.0
	for _, st := range r.Stages {
		m, _ := st.Get("nopm")
		sum += m.Value
	}
	if sum > orders {
		t.Errorf("the stages' NOPM add up to %v over their minutes, but the server committed %v new orders", sum, orders)
	}
}

// checkAutopilot checks the stages of an autopilot over vus.
func checkAutopilot(t *testing.T, r *results.Result, log string, vus []int32) {
	t.Helper()
	if r.Verdict != results.Succeeded {
		t.Fatalf("%s %v\n%s", r.Verdict, r.Reasons, tailOf(log))
	}
	if len(r.Stages) != len(vus) {
		t.Fatalf("%d stages, want %d: %+v\n%s", len(r.Stages), len(vus), r.Stages, tailOf(log))
	}
	lines := resultLines(log)
	if len(lines) != len(vus) {
		t.Fatalf("%d TEST RESULT lines", len(lines))
	}
	for i, st := range r.Stages {
		if want := fmt.Sprintf("test %d (vu=%d)", i+1, vus[i]); st.Name != want {
			t.Errorf("stage %d is named %q, want %q", i, st.Name, want)
		}
		if length := st.ToSeconds - st.FromSeconds; length < 55 || length > 61 {
			t.Errorf("%s: %.1f s long, want its measured minute", st.Name, length)
		}
		if i > 0 && st.FromSeconds < r.Stages[i-1].ToSeconds {
			t.Errorf("%s begins at %.1f s, before the stage before ends (%.1f s)", st.Name, st.FromSeconds, r.Stages[i-1].ToSeconds)
		}
		nopm, ok1 := st.Get("nopm")
		tpm, ok2 := st.Get("tpm")
		if !ok1 || !ok2 || nopm.Value != lines[i][0] || tpm.Value != lines[i][1] {
			t.Errorf("%s: NOPM %v TPM %v, HammerDB printed %v", st.Name, nopm, tpm, lines[i])
		}
		if !slices.ContainsFunc(st.Metrics, func(m results.Metric) bool {
			return m.Operation == "NEWORD" && m.Name == "latencyP99Millis" && m.Value > 0
		}) {
			t.Errorf("%s: no NEWORD p99 from the time profile: %+v", st.Name, st.Metrics)
		}
		t.Logf("%s %.0f-%.0f s: NOPM %v TPM %v", st.Name, st.FromSeconds, st.ToSeconds, nopm.Value, tpm.Value)
	}
	if last := lines[len(lines)-1]; testutil.MetricValue(t, r, "nopm", "") != last[0] {
		t.Errorf("headline NOPM %v, the last test's %v", testutil.MetricValue(t, r, "nopm", ""), last[0])
	}
}

// resultLines are the NOPM and TPM of each TEST RESULT line, in order.
func resultLines(log string) [][2]float64 {
	var out [][2]float64
	for _, m := range regexp.MustCompile(`TEST RESULT : System achieved ([0-9]+) NOPM from ([0-9]+) \S+ TPM`).FindAllStringSubmatch(log, -1) {
		nopm, _ := strconv.ParseFloat(m[1], 64)
		tpm, _ := strconv.ParseFloat(m[2], 64)
		out = append(out, [2]float64{nopm, tpm})
	}
	return out
}
