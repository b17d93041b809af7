package query

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// The client is the runner every workload pod has: the invocation's
// command names it where the Job puts it.
func TestRunnerPathIsTheJobs(t *testing.T) {
	spec := &benchv1.WorkloadSpec{QueryBench: &benchv1.QueryWorkload{Driver: benchv1.QueryDriverPostgres, Queries: []benchv1.NamedQuery{{Name: "Q1", SQL: "SELECT 1"}}}}
	inv := Query{}.Run(spec, pod.Endpoint{Host: "pg", Port: 5432}, Query{}.Steps(spec)[0])
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "n"}, Spec: benchv1.BenchmarkRunSpec{Workload: *spec}}
	job := specs.Job(specs.JobParams{Run: run, Name: "q-s1-r1", Role: benchv1.RoleLoadgen, Workload: Query{}.Name(), Invocation: inv, Image: "i", RunnerImage: "r"})
	if runner := job.Spec.Template.Spec.Containers[0].Command[0]; inv.Command[0] != runner {
		t.Errorf("the invocation runs %q, but workload pods have the runner at %q", inv.Command[0], runner)
	}
}

func TestRunInvocation(t *testing.T) {
	spec := &benchv1.WorkloadSpec{QueryBench: &benchv1.QueryWorkload{
		Driver: benchv1.QueryDriverClickHouse, Database: "ssb", RunsPerQuery: 5,
		QueryTimeout: &metav1.Duration{Duration: 90e9},
		Queries:      []benchv1.NamedQuery{{Name: "Q1", SQL: "SELECT 1;"}, {Name: "Q2", SQL: "SELECT 2 -- last"}},
		Settings:     map[string]benchv1.QuerySettingValue{"max_threads": "1", "enable_http_compression": "0"},
	}}
	ep := pod.Endpoint{Host: "ch.ns.svc", Port: 8443, TLS: true, CASecret: "ca", Password: &corev1.SecretKeySelector{Key: "p"}}
	inv := Query{}.Run(spec, ep, Query{}.Steps(spec)[0])
	want := "/dbperf/bin/dbperf-runner query --driver clickhouse --host ch.ns.svc --port 8443 --database ssb --tls --ca-file /etc/dbperf/tls/ca.crt " +
		"--queries /etc/dbperf/workload/queries.sql --runs 5 --timeout 1m30s --setting enable_http_compression=0 --setting max_threads=1 " +
		"--output /dbperf/out/query-result.json"
	if got := strings.Join(inv.Command, " "); got != want {
		t.Errorf("command\n got %s\nwant %s", got, want)
	}
	stmts, err := ParseQueries(inv.Files[queriesFile], DialectOf(benchv1.QueryDriverClickHouse))
	if err != nil || len(stmts) != 2 || stmts[0] != (Statement{"Q1", "SELECT 1"}) || stmts[1] != (Statement{"Q2", "SELECT 2 -- last"}) {
		t.Errorf("the inline queries read back as %+v (%v)", stmts, err)
	}
	if len(inv.SecretEnv) != 1 || inv.SecretEnv[0] != pod.EnvPassword || inv.ResultFiles[0] != pod.OutputDir+"/"+ResultFileName {
		t.Errorf("secret env %v, result files %v", inv.SecretEnv, inv.ResultFiles)
	}
}

func TestPrepareInvocation(t *testing.T) {
	spec := &benchv1.WorkloadSpec{QueryBench: &benchv1.QueryWorkload{
		Driver:           benchv1.QueryDriverPostgres,
		QueriesConfigMap: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "q"}, Key: "queries.sql"},
		Prepare: &benchv1.QueryPrepare{Script: "CREATE TABLE t (a int);",
			ScriptConfigMap: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "more.sql"},
			Loads: []benchv1.QueryLoad{{Table: "t", URL: "https://example.com/t.csv.gz"},
				{Table: "u", Format: benchv1.QueryLoadTSV, Claim: &benchv1.QueryLoadClaim{ClaimName: "data", Path: "u.tsv"}},
				{Table: "v", Claim: &benchv1.QueryLoadClaim{ClaimName: "data", Path: "dir/v.csv"}}},
			Command: []string{"sh", "-c", "gen | psql"}},
	}}
	ep := pod.Endpoint{Host: "pg", Port: 5432, Database: "app"}
	inv := Query{}.Prepare(spec, ep)
	want := "/dbperf/bin/dbperf-runner query --prepare --driver postgres --host pg --port 5432 --database app " +
		"--script /etc/dbperf/workload/prepare.sql --script /etc/dbperf/configmaps/s/more.sql " +
		"--load t:CSV:https://example.com/t.csv.gz --load u:TSV:/dbperf-data/data/u.tsv --load v:CSV:/dbperf-data/data/dir/v.csv -- sh -c gen | psql"
	if got := strings.Join(inv.Command, " "); got != want {
		t.Errorf("command\n got %s\nwant %s", got, want)
	}
	if len(inv.ClaimMounts) != 1 || inv.ClaimMounts[0] != (pod.ClaimMount{Claim: "data", MountPath: "/dbperf-data/data", ReadOnly: true}) {
		t.Errorf("claim mounts %+v", inv.ClaimMounts)
	}
	env := map[string]string{}
	for _, e := range inv.Env {
		env[e.Name] = e.Value
	}
	if env["DBPERF_TARGET_HOST"] != "pg" || env["DBPERF_TARGET_PORT"] != "5432" || env["DBPERF_TARGET_DATABASE"] != "app" {
		t.Errorf("the command's environment %v", env)
	}
	if (Query{}).Prepare(&benchv1.WorkloadSpec{QueryBench: &benchv1.QueryWorkload{Driver: "postgres"}}, ep) != nil {
		t.Error("no prepare settings must give no prepare step")
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		q    benchv1.QueryWorkload
		want string // a substring of the errors; "" none
	}{
		"valid": {q: benchv1.QueryWorkload{Driver: "clickhouse", Queries: []benchv1.NamedQuery{{Name: "Q1", SQL: "SELECT ';'"}}}},
		"two statements in one query": {q: benchv1.QueryWorkload{Driver: "clickhouse", Queries: []benchv1.NamedQuery{{Name: "Q1", SQL: "SELECT 1; SELECT 2"}}},
			want: "spec.workload.queryBench.queries[0].sql: Invalid value: \"SELECT 1; SELECT 2\": must be one statement, found 2"},
		"no queries": {q: benchv1.QueryWorkload{Driver: "postgres"}, want: "queries: Required"},
		"an unclosed quote in the script": {q: benchv1.QueryWorkload{Driver: "mysql", Queries: []benchv1.NamedQuery{{Name: "Q1", SQL: "SELECT 1"}},
			Prepare: &benchv1.QueryPrepare{Script: "INSERT INTO t VALUES ('a);"}}, want: "prepare.script: Invalid value"},
		"a load with both sources": {q: benchv1.QueryWorkload{Driver: "mysql", Queries: []benchv1.NamedQuery{{Name: "Q1", SQL: "SELECT 1"}},
			Prepare: &benchv1.QueryPrepare{Loads: []benchv1.QueryLoad{{Table: "t", URL: "http://x/t.csv", Claim: &benchv1.QueryLoadClaim{ClaimName: "c", Path: "t.csv"}}}}},
			want: "exactly one of url or claim"},
		"a claim path out of the volume": {q: benchv1.QueryWorkload{Driver: "mysql", Queries: []benchv1.NamedQuery{{Name: "Q1", SQL: "SELECT 1"}},
			Prepare: &benchv1.QueryPrepare{Loads: []benchv1.QueryLoad{{Table: "t", Claim: &benchv1.QueryLoadClaim{ClaimName: "c", Path: "../etc/passwd"}}}}},
			want: "without .."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := Query{}.Validate(&benchv1.WorkloadSpec{QueryBench: &tc.q}, field.NewPath("spec", "workload"))
			if got := errs.ToAggregate(); (got == nil) != (tc.want == "") || (got != nil && !strings.Contains(got.Error(), tc.want)) {
				t.Errorf("errors %v, want %q", got, tc.want)
			}
		})
	}
}

// The mysql driver speaks MySQL's protocol, so each measurement's session
// (TLS cipher, session variables) is checked; ClickHouse's HTTP is none.
func TestSQLProtocol(t *testing.T) {
	for driver, want := range map[benchv1.QueryDriver]struct {
		protocol            pod.Protocol
		statistics, checked bool
	}{
		benchv1.QueryDriverMySQL:      {pod.ProtocolMySQL, true, true},
		benchv1.QueryDriverPostgres:   {pod.ProtocolPostgres, true, false},
		benchv1.QueryDriverClickHouse: {pod.ProtocolClickHouse, false, false},
	} {
		spec := &benchv1.WorkloadSpec{QueryBench: &benchv1.QueryWorkload{Driver: driver, Database: "ssb"}}
		got := workloads.SpeaksOf(Query{}, spec)
		if got != (workloads.Speaks{Protocol: want.protocol, Database: "ssb"}) || got.Protocol.HasStatistics() != want.statistics || got.Protocol.Checked() != want.checked {
			t.Errorf("%s: %+v, want %+v", driver, got, want)
		}
	}
}
