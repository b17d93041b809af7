package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// publishedRunsPerVariant is what the test shrinks every published
// comparison's runsPerVariant to (the samples say 5): two runs per variant
// are enough to drive the lifecycle and write a report, though not to reach
// a verdict. Nothing else of a sample is changed: its target, workload,
// sweep, durations, criteria and validity are applied as written (the
// durations cost nothing here, the kubelet answers at once).
const publishedRunsPerVariant = 2

// publishedComparison is what one comparison of a published sample must do,
// and how the test plays its tool.
type publishedComparison struct {
	tool string // registry name of the load tool
	// fixture is a recorded output of that tool, in test/fixtures/<tool>,
	// or, when it starts with "testdata:", in the tool's package testdata.
	fixture string
	// prepare returns the file the prepare step prints; nil when the run
	// must have no prepare step.
	prepare func(t *testing.T) string
	steps   []string // the sweep, as the run's steps are named
	// args are in the tool's command line of every measurement Job,
	// stepArgs[i] in that of step i, prepareArgs in the prepare Job's;
	// notArgs in none of them.
	args, stepArgs, prepareArgs, notArgs []string
	// files are in the run's files ConfigMap, by key.
	files map[string][]string
	// serverArgs are in the args of every container of the provisioned
	// server (each StatefulSet's); serverReplicas, when set, is its
	// StatefulSet's size; containers, when set, the containers of each of
	// its pods, and serverCPU each container's CPU request and limit.
	serverArgs     []string
	serverReplicas int32
	containers     int
	serverCPU      string
	// replicaArgs are in the command line of the replicas' StatefulSet.
	replicaArgs []string
	// clusterServers is how many servers the Job that creates a Valkey
	// cluster joins.
	clusterServers int
	// clusterSpec are fragments of each variant's CloudNativePG Cluster
	// spec, as JSON (keys sorted).
	clusterSpec map[string][]string
	// pool, when set, is the pool of every variant's target (the variants
	// do not name it); otherwise each variant is named after its pool.
	pool string
	// instances are, by variant, the target's instances as the runs'
	// status.environment records them (role@zone, sorted), every load
	// generator in loadgenZone; volumes its volumes (purpose size class
	// [temporary]); sets its StatefulSets (role×pods, sorted).
	instances   map[string][]string
	loadgenZone string
	volumes     map[string][]string
	sets        map[string][]string
	// prepareNotArgs are not in the prepare Job's command line.
	prepareNotArgs []string
	// generators is the load generators of each measurement (an Indexed
	// Job of that many pods); 0 or 1: one pod.
	generators int32
	// runsEnd is the phase every run ends in: Succeeded, or Invalid when
	// the recorded output breaks the sample's validity thresholds, with
	// invalidBecause in the run's Valid condition.
	runsEnd        benchv1.Phase
	invalidBecause string
}

// The published comparisons (config/samples/published, described in
// docs/published-comparisons.md), applied as their files are written, each
// driven through its whole life in envtest: the comparison creates its runs
// (interleaved, the target placed on each variant's pool or pointed at each
// variant's endpoint, the load generators on pool loadgen); the test plays
// the target ready and the kubelet, answering every prepare and measurement
// Job with a recorded output of the right tool through the real runner,
// after checking the Job's command line (and the generated scripts and
// property files) against the sample's settings; until every comparison has
// Succeeded with its report. Shrunk: runsPerVariant 5 → 2 (see above).
//
// The topologies are played as their controllers would: CloudNativePG's
// instances are pods on the nodes the Cluster's affinity admits, the first
// by name its primary (so a primary asked for in zone-b starts in zone-a
// and the operator must switch it over, which the test plays too); every
// StatefulSet of a target is reported ready, the Job that creates a Valkey
// cluster succeeded; a measurement of several load generators is an
// Indexed Job whose pods start, wait for the operator's start barrier and
// end; each Job runs on a load-generator node its node selector admits.
// The runs' status.environment must then show each instance's role and
// zone, and their volumes, as the sample asks.
//
// Recorded outputs (test/fixtures): HammerDB on MySQL over TLS —
// mysql-400wh-100vu-ssl-cipher-allwh.txt, whose virtual users print their
// Ssl_cipher, which a TLS target requires; HammerDB on PostgreSQL — the
// real HammerDB 4.12 run against PostgreSQL 15 recorded in
// workloads/hammerdb/testdata; memtier — the vc-redis text outputs (no recorded
// run of a custom INCR command exists: the INCR comparison is answered with
// a SET/GET table); YCSB — the MongoDB binding's workload A output for A,
// and the scylla workload B and F outputs for B and F. In the only recorded
// workload F run 307 READs failed (7.67e-05 % of its operations): under the
// sample's maxErrorPercent 0 every F measurement is Invalid, and the test
// checks that the runs say so and the comparison still ends with its report,
// every measurement excluded; OSB — the documentation's quickstart summary;
// pgbench with a custom script — a pgbench 15 run of one (its statement
// latencies); the query benchmark — the reports in workloads/query/testdata
// (see the ClickHouse cases).
func TestPublishedSamples(t *testing.T) {
	hammerdbBuild := func(t *testing.T) string {
		return kit.WriteTemp(t, "Vuser 1:CREATING TPCC TABLES\nVuser 1:TPCC SCHEMA COMPLETE\nVuser 1:FINISHED SUCCESS\nALL VIRTUAL USERS COMPLETE\n")
	}
	memtierLoad := func(t *testing.T) string { return kit.Fixture(t, "memtier", "vc-redis-text-4.txt") }
	ycsbLoadStep := func(t *testing.T) string { return kit.WriteTemp(t, ycsbLoad(t)) }
	memtierSteps := []string{"threads=4,pipeline=1", "threads=4,pipeline=8", "threads=4,pipeline=16", "threads=4,pipeline=32"}
	memtierPipelines := []string{"--pipeline 1 --test-time 180", "--pipeline 8 --test-time 180", "--pipeline 16 --test-time 180", "--pipeline 32 --test-time 180"}
	memtierCommon := []string{"memtier_benchmark --server ", "--key-minimum 1 --key-maximum 1000000", "--threads 4 --clients 50"}
	memtierFill := []string{"--ratio 1:0 --key-pattern P:P --requests allkeys"}
	ycsbSteps := []string{"threads=32", "threads=48", "threads=96", "threads=128"}
	ycsbThreads := []string{"-threads 32 -s", "-threads 48 -s", "-threads 96 -s", "-threads 128 -s"}
	ycsbArgs := []string{"site.ycsb.Client -t -db site.ycsb.db.MongoDbClient -P /etc/dbperf/workload/workload.properties"}
	ycsbFiles := func(mix ...string) map[string][]string {
		return map[string][]string{"workload.properties": append([]string{"recordcount=1000000\n", "operationcount=5000000\n",
			"fieldcount=10\n", "fieldlength=100\n", "hdrhistogram.percentiles=95,99,50,99.9\n", "requestdistribution=zipfian\n"}, mix...)}
	}
	osbArgs := func(shards, replicas string) []string {
		return []string{"opensearch-benchmark execute-test --pipeline=benchmark-only --target-hosts=",
			"--workload=http_logs", "--test-procedure=append-no-conflicts-index-only",
			"--include-tasks=delete-index,create-index,check-cluster-health,index-append",
			"--workload-params=bulk_indexing_clients:8,bulk_size:5000,number_of_replicas:" + replicas + ",number_of_shards:" + shards,
			"timeout:120", "use_ssl:true"}
	}
	mysqlScripts := map[string][]string{
		"build.tcl": {"dbset db mysql\n", "diset connection mysql_ssl true\n", "diset connection mysql_ssl_ca /etc/dbperf/tls/ca.crt\n",
			"diset tpcc mysql_count_ware 100\n", "diset tpcc mysql_num_vu 16\n", "diset tpcc mysql_storage_engine innodb\n", "buildschema\n"},
		"run-0.tcl": {"diset connection mysql_ssl true\n", "diset tpcc mysql_count_ware 100\n", "diset tpcc mysql_rampup 2\n",
			"diset tpcc mysql_duration 5\n", "diset tpcc mysql_allwarehouse true\n", "diset tpcc mysql_timeprofile true\n", "vuset vu 30\n"},
		"run-1.tcl": {"diset tpcc mysql_rampup 2\n", "diset tpcc mysql_duration 5\n", "vuset vu 50\n"},
	}
	hammerdbRuns := []string{"-- ./hammerdbcli auto /etc/dbperf/workload/run-0.tcl", "-- ./hammerdbcli auto /etc/dbperf/workload/run-1.tcl"}
	hammerdbPrepare := []string{"-- ./hammerdbcli auto /etc/dbperf/workload/build.tcl"}

	cases := []struct {
		file        string
		comparisons map[string]publishedComparison
		// configMaps are what the sample's comment has the user create
		// before applying it: name → key → content.
		configMaps map[string]map[string]string
	}{
		{file: "hammerdb-tprocc-postgres-1wh.yaml", comparisons: map[string]publishedComparison{
			"tprocc-pg-1wh": {tool: "hammerdb", fixture: "testdata:real-4.12-pg15-2vu-rampup1-duration1.log", prepare: hammerdbBuild,
				steps: []string{"vu=20", "vu=40"}, stepArgs: hammerdbRuns, prepareArgs: hammerdbPrepare,
				files: map[string][]string{
					"build.tcl": {"dbset db pg\n", "diset tpcc pg_count_ware 1\n", "diset tpcc pg_num_vu 1\n", "buildschema\n"},
					"run-0.tcl": {"diset tpcc pg_count_ware 1\n", "diset tpcc pg_rampup 2\n", "diset tpcc pg_duration 5\n",
						"diset tpcc pg_timeprofile true\n", "vuset vu 20\n"},
					"run-1.tcl": {"diset tpcc pg_rampup 2\n", "diset tpcc pg_duration 5\n", "vuset vu 40\n"},
				},
				runsEnd: benchv1.PhaseSucceeded},
		}},
		{file: "hammerdb-tprocc-mysql-100wh-tls.yaml", comparisons: map[string]publishedComparison{
			"tprocc-mysql-100wh-tls": {tool: "hammerdb", fixture: "mysql-400wh-100vu-ssl-cipher-allwh.txt", prepare: hammerdbBuild,
				steps: []string{"vu=30", "vu=50"}, stepArgs: hammerdbRuns, prepareArgs: hammerdbPrepare, files: mysqlScripts,
				serverArgs: []string{"--require-secure-transport=ON", "--innodb-buffer-pool-size=12G", "--max-connections=500"},
				runsEnd:    benchv1.PhaseSucceeded},
			// skipPrepare: the schema is built once per endpoint, outside the comparison.
			"tprocc-managed-mysql-100wh-tls": {tool: "hammerdb", fixture: "mysql-400wh-100vu-ssl-cipher-allwh.txt",
				steps: []string{"vu=30", "vu=50"}, stepArgs: hammerdbRuns, files: mysqlScripts, runsEnd: benchv1.PhaseSucceeded},
		}},
		{file: "memtier-valkey-1m-1kib.yaml", comparisons: map[string]publishedComparison{
			"memtier-valkey-get-heavy": {tool: "memtier", fixture: "vc-redis-text-1.txt", prepare: memtierLoad, steps: memtierSteps,
				args:     append([]string{"--data-size 1024", "--ratio 1:10 --key-pattern R:R"}, memtierCommon...),
				stepArgs: memtierPipelines, prepareArgs: append([]string{"--data-size 1024"}, memtierFill...),
				serverArgs: []string{"--io-threads 4"}, runsEnd: benchv1.PhaseSucceeded},
			"memtier-valkey-set-only": {tool: "memtier", fixture: "vc-redis-text-4.txt", prepare: memtierLoad, steps: memtierSteps,
				args:     append([]string{"--data-size 1024", "--ratio 1:0 --key-pattern R:R"}, memtierCommon...),
				stepArgs: memtierPipelines, prepareArgs: append([]string{"--data-size 1024"}, memtierFill...),
				serverArgs: []string{"--io-threads 4"}, runsEnd: benchv1.PhaseSucceeded},
			"memtier-valkey-incr": {tool: "memtier", fixture: "vc-redis-text-2.txt", steps: memtierSteps,
				args:    append([]string{"--command INCR __key__ --command-ratio 1 --command-key-pattern R"}, memtierCommon...),
				notArgs: []string{"--ratio"}, stepArgs: memtierPipelines, serverArgs: []string{"--io-threads 4"}, runsEnd: benchv1.PhaseSucceeded},
		}},
		{file: "ycsb-mongodb-a-b-f.yaml", comparisons: map[string]publishedComparison{
			"ycsb-mongodb-a": {tool: "ycsb", fixture: "vc-mongodb-0.17.0-workloada-8threads.txt", prepare: ycsbLoadStep, steps: ycsbSteps,
				args: ycsbArgs, stepArgs: ycsbThreads, prepareArgs: []string{"site.ycsb.Client -load", "-threads 64 -s"},
				files:      ycsbFiles("readproportion=0.5\n", "updateproportion=0.5\n"),
				serverArgs: []string{"--wiredTigerCacheSizeGB 8"}, runsEnd: benchv1.PhaseSucceeded},
			"ycsb-mongodb-b": {tool: "ycsb", fixture: "scylla-ycsb-workloadb-md.txt", prepare: ycsbLoadStep, steps: ycsbSteps,
				args: ycsbArgs, stepArgs: ycsbThreads, prepareArgs: []string{"site.ycsb.Client -load", "-threads 64 -s"},
				files:      ycsbFiles("readproportion=0.95\n", "updateproportion=0.05\n"),
				serverArgs: []string{"--wiredTigerCacheSizeGB 8"}, runsEnd: benchv1.PhaseSucceeded},
			"ycsb-mongodb-f": {tool: "ycsb", fixture: "scylla-ycsb-workloadf-md.txt", prepare: ycsbLoadStep, steps: ycsbSteps,
				args: ycsbArgs, stepArgs: ycsbThreads, prepareArgs: []string{"site.ycsb.Client -load", "-threads 64 -s"},
				files:      ycsbFiles("readproportion=0.5\n", "readmodifywriteproportion=0.5\n", "updateproportion=0\n"),
				serverArgs: []string{"--wiredTigerCacheSizeGB 8"}, runsEnd: benchv1.PhaseInvalid, invalidBecause: "7.67e-05% of requests failed, above the 0% limit"},
		}},
		{file: "osb-http-logs-index-append.yaml", comparisons: map[string]publishedComparison{
			"osb-index-append-1node": {tool: "osb", fixture: "docs-quickstart-percolator-test-mode-summary.txt", steps: []string{"clients=8"},
				args: osbArgs("1", "0"), serverReplicas: 1, runsEnd: benchv1.PhaseSucceeded},
			"osb-index-append-3nodes": {tool: "osb", fixture: "docs-quickstart-percolator-test-mode-summary.txt", steps: []string{"clients=8"},
				args: osbArgs("3", "1"), serverReplicas: 3, runsEnd: benchv1.PhaseSucceeded},
			"osb-index-append-managed": {tool: "osb", fixture: "docs-quickstart-percolator-test-mode-summary.txt", steps: []string{"clients=8"},
				args: append(osbArgs("3", "1"), "basic_auth_user:"), runsEnd: benchv1.PhaseSucceeded},
		}},
		{file: "postgres-replica-across-zones.yaml", comparisons: map[string]publishedComparison{
			"tprocc-pg-zones": {tool: "hammerdb", fixture: "testdata:real-4.12-pg15-2vu-rampup1-duration1.log", prepare: hammerdbBuild,
				steps: []string{"vu=16", "vu=32"}, stepArgs: hammerdbRuns, prepareArgs: hammerdbPrepare,
				files: map[string][]string{
					"build.tcl": {"dbset db pg\n", "diset tpcc pg_count_ware 10\n", "diset tpcc pg_num_vu 4\n", "buildschema\n"},
					"run-0.tcl": {"diset tpcc pg_rampup 2\n", "diset tpcc pg_duration 5\n", "diset tpcc pg_timeprofile true\n", "vuset vu 16\n"},
					"run-1.tcl": {"vuset vu 32\n"},
				},
				pool: "standard-v4a", loadgenZone: "zone-b",
				clusterSpec: map[string][]string{
					"across-zones":            {`"instances":2,`, pgSynchronous, `"topologyKey":"topology.kubernetes.io/zone"`},
					"single-node":             {`"instances":1,`, `"nodeSelector":{"pool":"standard-v4a","topology.kubernetes.io/zone":"zone-b"}`},
					"primary-in-loadgen-zone": {`"instances":2,`, pgSynchronous, `"topologyKey":"topology.kubernetes.io/zone"`},
				},
				instances: map[string][]string{
					"across-zones": {"primary@zone-a", "replica@zone-b"}, "single-node": {"primary@zone-b"},
					"primary-in-loadgen-zone": {"primary@zone-b", "replica@zone-a"},
				},
				runsEnd: benchv1.PhaseSucceeded},
		}},
		{file: "postgres-temp-tablespace.yaml", comparisons: map[string]publishedComparison{
			"pg-temp-tablespace": {tool: "pgbench", fixture: "pg15plus-custom-script-r-per-statement-latency.txt",
				steps: []string{"clients=4", "clients=8"}, args: []string{"--time 180", "--no-vacuum --file /etc/dbperf/workload/"},
				stepArgs: []string{"--client 4 --jobs 4 ", "--client 8 --jobs 4 "}, notArgs: []string{"--builtin"},
				files: map[string][]string{"script.sql": {"FROM generate_series(1, 2000000) AS g ORDER BY md5(g::text)"}},
				pool:  "standard-v4a", loadgenZone: "zone-a",
				clusterSpec: map[string][]string{
					"temp-on-data":     {pgWAL, `"tablespaces":[{"name":"temp_ts","storage":{"resizeInUseVolumes":true,"size":"100Gi","storageClass":"local-nvme"},"temporary":false}]`},
					"temp-on-own-disk": {pgWAL, `"tablespaces":[{"name":"temp_ts","storage":{"resizeInUseVolumes":true,"size":"100Gi","storageClass":"local-nvme"},"temporary":true}]`},
				},
				instances: map[string][]string{"temp-on-data": {"primary@"}, "temp-on-own-disk": {"primary@"}},
				volumes: map[string][]string{
					"temp-on-data":     {"data 50Gi premium-ssd", "wal 20Gi premium-ssd", "tablespace/temp_ts 100Gi local-nvme"},
					"temp-on-own-disk": {"data 50Gi premium-ssd", "wal 20Gi premium-ssd", "tablespace/temp_ts 100Gi local-nvme temporary"},
				},
				runsEnd: benchv1.PhaseSucceeded},
		}},
		{file: "valkey-replication-on-off.yaml", comparisons: map[string]publishedComparison{
			"valkey-replication": {tool: "memtier", fixture: "vc-redis-text-1.txt", prepare: memtierLoad,
				prepareArgs: append([]string{"--data-size 1024"}, memtierFill...), steps: []string{"threads=4,pipeline=1", "threads=4,pipeline=16"},
				args:     append([]string{"--data-size 1024", "--ratio 1:1"}, memtierCommon...),
				stepArgs: []string{"--pipeline 1 --test-time 120", "--pipeline 16 --test-time 120"}, notArgs: []string{"--cluster-mode"},
				serverArgs: []string{"--io-threads 4"}, replicaArgs: []string{"--replicaof "}, pool: "standard-v4a",
				sets:    map[string][]string{"replication-off": {"server×1"}, "replication-on": {"primary×1", "replica×1"}},
				runsEnd: benchv1.PhaseSucceeded},
		}},
		{file: "valkey-cluster-28x2.yaml", comparisons: map[string]publishedComparison{
			"valkey-cluster-28x2": {tool: "memtier", fixture: "vc-redis-text-4.txt", prepare: memtierLoad,
				prepareArgs: append([]string{"--data-size 100 --hide-histogram --cluster-mode"}, memtierFill...), steps: []string{"threads=8,pipeline=1", "threads=8,pipeline=8"},
				args: []string{"--cluster-mode", "--key-minimum 1 --key-maximum 10000000 --data-size 100", "--ratio 1:10 --key-pattern R:R",
					"--threads 8 --clients 25"},
				stepArgs:   []string{"--pipeline 1 --test-time 180", "--pipeline 8 --test-time 180"},
				serverArgs: []string{"--cluster-enabled yes"}, serverReplicas: 2, containers: 14, serverCPU: "1", clusterServers: 28, generators: 2,
				sets:    map[string][]string{"standard-v3": {"shard×2"}, "standard-v4a": {"shard×2"}},
				runsEnd: benchv1.PhaseSucceeded},
		}},
		// The harness has no MySQL server, so it cannot run the session
		// check the runner runs after each measurement (the version, the
		// cipher and autocommit a session of HammerDB's user negotiated;
		// internal/runner/sessioncheck tests it against a real server): it runs
		// the runner on the recorded output without the check's flags, and
		// checks those flags are on every measurement's command line with
		// the sample's version, cipher and autocommit. The recorded virtual
		// users printed Ssl_cipher ECDHE-RSA-AES128-GCM-SHA256, a TLS 1.2
		// suite (the recording is of another server; this sample's offers
		// TLS_AES_128_GCM_SHA256 alone). HammerDB's parser only requires
		// that every virtual user printed a cipher (HammerDB cannot ask for
		// a TLS 1.3 suite, so the session check alone compares it with the
		// one asked for), so the runs Succeed here, the cipher unchecked.
		{file: "mysql-replica-tls13.yaml", comparisons: map[string]publishedComparison{
			"tprocc-mysql-replica-tls13": {tool: "hammerdb", fixture: "mysql-400wh-100vu-ssl-cipher-allwh.txt", prepare: hammerdbBuild,
				steps: []string{"vu=32"}, stepArgs: hammerdbRuns[:1], prepareArgs: hammerdbPrepare,
				args: []string{"--session-check ", "--session-protocol mysql --session-tls --session-tls-ca ", "--session-tls-version TLSv1.3",
					"--session-tls-cipher TLS_AES_128_GCM_SHA256", "--session-variable autocommit=ON"},
				prepareNotArgs: []string{"--session-check"},
				files: map[string][]string{
					"build.tcl": {"dbset db mysql\n", "diset connection mysql_ssl true\n", "diset connection mysql_ssl_ca /etc/dbperf/tls/ca.crt\n",
						"diset tpcc mysql_count_ware 20\n", "diset tpcc mysql_num_vu 4\n", "buildschema\n"},
					"run-0.tcl": {"diset connection mysql_ssl true\n", "diset tpcc mysql_rampup 2\n", "diset tpcc mysql_duration 5\n",
						"diset tpcc mysql_timeprofile true\n", "vuset vu 32\n"},
				},
				serverArgs: []string{"--require-secure-transport=ON", "--innodb-buffer-pool-size=8G", "--max-connections=300",
					"--tls-version=TLSv1.3", "--tls-ciphersuites=TLS_AES_128_GCM_SHA256", "--autocommit=ON"},
				replicaArgs: []string{"SOURCE_SSL=1", "--read-only=ON"}, pool: "standard-v4a",
				sets:    map[string][]string{"replication-off": {"server×1"}, "replication-on": {"primary×1", "replica×1"}},
				runsEnd: benchv1.PhaseSucceeded},
		}},
		// No recorded report of all 13 SSB queries exists: the SSB runs are
		// answered with a recorded ClickHouse report of Q1.1 and Q1.2, each
		// run 3 times, and the report must compare both, cold and hot: Δ %
		// and a verdict in each row; every run answered alike, each
		// interval is undefined, which the row's verdict must say. The
		// ClickBench runs are answered with one in which a query failed
		// every run and another once: the failed runs are counted (50 % of
		// the runs) and named, and under the sample's validity (the default
		// maxErrorPercent, 0) every measurement is Invalid, excluded from
		// the comparison, which compared nothing and says so
		// (NothingCompared, with the reason), still with its report.
		{file: "clickhouse-ssb-pools.yaml", configMaps: map[string]map[string]string{"ssb-clickhouse": {
			"queries.sql": readRepoFile(t, "workloads/query/examples/ssb-clickhouse.sql"),
			"schema.sql":  readRepoFile(t, "workloads/query/examples/ssb-clickhouse-schema.sql"),
		}}, comparisons: map[string]publishedComparison{
			"clickhouse-ssb": {tool: "query-bench", fixture: "testdata:clean-3-runs.json", prepare: queryPrepare, steps: []string{"default"},
				args: []string{" query --driver clickhouse --host ", " --database ssb --queries /etc/dbperf/configmaps/ssb-clickhouse/queries.sql --runs 3 --timeout 10m0s"},
				prepareArgs: []string{" query --prepare --driver clickhouse --host ", " --database ssb --script /etc/dbperf/configmaps/ssb-clickhouse/schema.sql",
					"--load lineorder_flat:CSV:https://data.example.com/ssb/sf10/lineorder_flat.csv.gz"},
				runsEnd: benchv1.PhaseSucceeded},
		}},
		{file: "clickhouse-clickbench-pools.yaml", configMaps: map[string]map[string]string{"clickbench": {
			"queries.sql": clickbenchQueries, "create.sql": clickbenchCreate,
		}}, comparisons: map[string]publishedComparison{
			"clickhouse-clickbench": {tool: "query-bench", fixture: "testdata:one-failed-query.json", prepare: queryPrepare, steps: []string{"default"},
				runsEnd: benchv1.PhaseInvalid, invalidBecause: "50% of requests failed, above the 0% limit",
				args: []string{" query --driver clickhouse --host ", " --database clickbench --queries /etc/dbperf/configmaps/clickbench/queries.sql --runs 3 --timeout 10m0s"},
				prepareArgs: []string{" query --prepare --driver clickhouse --host ", " --database clickbench --script /etc/dbperf/configmaps/clickbench/create.sql",
					"--load hits:TSV:https://datasets.clickhouse.com/hits_compatible/hits.tsv.gz"}},
		}},
	}
	files, err := filepath.Glob(filepath.Join(testutil.RepoRoot(), "config", "samples", "published", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{"kustomization.yaml": true}
	for _, c := range cases {
		covered[c.file] = true
	}
	for _, f := range files {
		if !covered[filepath.Base(f)] {
			t.Errorf("published sample %s is not driven by this test", filepath.Base(f))
		}
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".yaml"), func(t *testing.T) {
			start := time.Now()
			drivePublished(t, c.file, c.comparisons, c.configMaps)
			t.Logf("%s: %d comparisons through their lifecycle in %s", c.file, len(c.comparisons), time.Since(start).Round(100*time.Millisecond))
		})
	}
}

// drivePublished applies one published sample file and plays every
// comparison in it to its end.
func drivePublished(t *testing.T, file string, want map[string]publishedComparison, configMaps map[string]map[string]string) {
	h := newHarness(t)
	ctx := context.Background()
	publishedNodes(h)
	for name, data := range configMaps {
		h.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data})
	}

	// Apply every object of the file, as kubectl apply -f would, with the
	// comparisons' runsPerVariant shrunk.
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "config", "samples", "published", file))
	if err != nil {
		t.Fatal(err)
	}
	applied := map[string]*benchv1.BenchmarkComparison{}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil || obj.GetKind() == "" {
			continue
		}
		if obj.GetKind() != "BenchmarkComparison" {
			obj.SetNamespace(h.NS)
			if err := k8s.Create(ctx, obj); err != nil {
				t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
			continue
		}
		cmp := &benchv1.BenchmarkComparison{}
		if err := yaml.UnmarshalStrict([]byte(doc), cmp); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if _, ok := want[cmp.Name]; !ok {
			t.Fatalf("%s: comparison %s has no expectations in this test", file, cmp.Name)
		}
		// At 5 against 5 runs the rank test's smallest p-value, 0.0079,
		// still passes Holm over 4 steps (0.05 / 4); at 4 against 4 it
		// cannot (docs/published-comparisons.md).
		if cmp.Spec.RunsPerVariant < 5 || cmp.Spec.Order != benchv1.OrderInterleaved {
			t.Errorf("%s: %d runs per variant, order %q: a published comparison makes at least 5, interleaved",
				cmp.Name, cmp.Spec.RunsPerVariant, cmp.Spec.Order)
		}
		cmp.Spec.RunsPerVariant = publishedRunsPerVariant
		h.Create(cmp)
		applied[cmp.Name] = cmp
	}
	if len(applied) != len(want) {
		t.Fatalf("%s: %d comparisons applied, %d expected", file, len(applied), len(want))
	}

	answered, checkedJobs := map[string]bool{}, map[string]bool{}
	checkedFiles := map[string]bool{}
	placed := map[string]string{}   // run → the pool its target was placed on, or its endpoint
	shapes := map[string][]string{} // run → its StatefulSets, role×pods
	parallel := parallelKubelet{}
	var totalJobs int
	testutil.Eventually(t, 120*time.Second, file+": every comparison ended", func() error {
		var runs benchv1.BenchmarkRunList
		if err := k8s.List(ctx, &runs, client.InNamespace(h.NS)); err != nil {
			return err
		}
		byName := map[string]*benchv1.BenchmarkRun{}
		for i := range runs.Items {
			run := &runs.Items[i]
			byName[run.Name] = run
			w := want[comparisonOf(run)]
			if ext := run.Spec.Target.External; ext != nil {
				placed[run.Name] = ext.Host
			}
			readyPublishedTarget(t, h, run, w, placed, shapes)
		}
		var jobs batchv1.JobList
		if err := k8s.List(ctx, &jobs, client.InNamespace(h.NS)); err != nil {
			return err
		}
		for i := range jobs.Items {
			j := &jobs.Items[i]
			// The target's own Jobs (the one that creates a Valkey
			// cluster) are readyPublishedTarget's.
			if answered[j.Name] || j.Labels[benchv1.LabelRole] == benchv1.RoleTarget {
				continue
			}
			run := byName[j.Spec.Template.Annotations[benchv1.AnnotationRunName]]
			if run == nil {
				return fmt.Errorf("job %s of a run not listed yet", j.Name)
			}
			w := want[comparisonOf(run)]
			if !checkedFiles[run.Name] {
				if err := checkPublishedFiles(ctx, h, run, w); err != nil {
					return err
				}
				checkedFiles[run.Name] = true
			}
			if !checkedJobs[j.Name] {
				checkPublishedJob(t, run, j, w)
				checkMounts(ctx, t, j)
				checkedJobs[j.Name] = true
			}
			nodes := placePods(ctx, t, publishedLoadgenNodes, &j.Spec.Template.Spec)
			if len(nodes) == 0 {
				t.Fatalf("job %s: no load generator node matches %v", j.Name, j.Spec.Template.Spec.NodeSelector)
			}
			recorded := fixturePath(t, w.tool, w.fixture)
			switch {
			case j.Labels[benchv1.LabelRole] == benchv1.RolePrepare:
				answerJob(t, h, j, nodes[0], w.tool, w.prepare(t))
			case ptrValue(j.Spec.Completions) > 1:
				if !parallel.step(ctx, t, h, j, nodes, w.tool, recorded) {
					continue
				}
			default:
				answerJob(t, h, j, nodes[0], w.tool, recorded)
			}
			answered[j.Name] = true
			totalJobs++
		}
		var pending []string
		for name := range applied {
			cmp := &benchv1.BenchmarkComparison{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: name}, cmp); err != nil {
				return err
			}
			if !cmp.Status.Phase.Terminal() {
				pending = append(pending, fmt.Sprintf("%s %s (%s)", name, cmp.Status.Phase, cmp.Status.Progress))
			}
		}
		if len(pending) > 0 {
			sort.Strings(pending)
			return fmt.Errorf("%d jobs answered; still running: %s", totalJobs, strings.Join(pending, ", "))
		}
		return nil
	})

	for name, w := range want {
		cmp := &benchv1.BenchmarkComparison{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: name}, cmp); err != nil {
			t.Fatal(err)
		}
		checkPublishedComparison(t, h, cmp, w, placed, shapes)
	}
}

// comparisonOf names the comparison that owns a run.
func comparisonOf(run *benchv1.BenchmarkRun) string {
	if ref := metav1.GetControllerOf(run); ref != nil && ref.Kind == "BenchmarkComparison" {
		return ref.Name
	}
	return ""
}

// readyPublishedTarget plays CloudNativePG, or the StatefulSet and Job
// controllers, for a run's provisioned target, once it exists, after
// checking that it stands on the pool the run's variant names and has the
// sample's server settings.
func readyPublishedTarget(t *testing.T, h *harness, run *benchv1.BenchmarkRun, w publishedComparison, placed map[string]string, shapes map[string][]string) {
	t.Helper()
	ctx := context.Background()
	if run.Status.Phase.Terminal() || run.Spec.Target.External != nil {
		return
	}
	if run.Spec.Target.Postgres != nil {
		cluster := &unstructured.Unstructured{}
		cluster.SetGroupVersionKind(specs.CNPGClusterGVK)
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: specs.PostgresClusterName(run)}, cluster); err != nil {
			return
		}
		if _, seen := placed[run.Name]; !seen {
			checkCluster(t, run, cluster, w)
		}
		placed[run.Name], _, _ = unstructured.NestedString(cluster.Object, "spec", "affinity", "nodeSelector", "pool")
		playCNPG(ctx, t, h, cluster)
		return
	}
	var sets appsv1.StatefulSetList
	if err := k8s.List(ctx, &sets, client.InNamespace(h.NS), client.MatchingLabels{benchv1.LabelRunUID: string(run.UID)}); err != nil {
		t.Fatal(err)
	}
	for i := range sets.Items {
		sts := &sets.Items[i]
		n := ptrValue(sts.Spec.Replicas)
		if sts.Status.ReadyReplicas == n {
			continue
		}
		if sts.Spec.Template.Labels[benchv1.LabelInstanceRole] != string(benchv1.InstanceReplica) {
			placed[run.Name] = sts.Spec.Template.Spec.NodeSelector["pool"]
		}
		if w.serverReplicas != 0 && n != w.serverReplicas {
			t.Errorf("run %s: %d server pods, want %d", run.Name, n, w.serverReplicas)
		}
		shapes[run.Name] = append(shapes[run.Name], checkServerSet(t, run, sts, w))
		sts.Status.Replicas, sts.Status.ReadyReplicas, sts.Status.AvailableReplicas = n, n, n
		sts.Status.ObservedGeneration = sts.Generation
		if err := k8s.Status().Update(ctx, sts); err != nil {
			t.Fatal(err)
		}
	}
	completeClusterJob(ctx, t, run, w)
}

// checkCluster checks a CloudNativePG Cluster against the sample.
func checkCluster(t *testing.T, run *benchv1.BenchmarkRun, cluster *unstructured.Unstructured, w publishedComparison) {
	t.Helper()
	spec, _, _ := unstructured.NestedMap(cluster.Object, "spec")
	if su, _, _ := unstructured.NestedBool(spec, "enableSuperuserAccess"); w.tool == "hammerdb" && !su {
		t.Errorf("run %s: HammerDB on CloudNativePG needs superuser access", run.Name)
	}
	want, ok := w.clusterSpec[run.Labels[benchv1.LabelVariant]]
	if !ok {
		want = []string{`"instances":1,`} // the sample asks for a single node
	}
	js, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range want {
		if !strings.Contains(string(js), f) {
			t.Errorf("run %s: the Cluster's spec lacks %s: %s", run.Name, f, js)
		}
	}
}

// checkPublishedFiles checks the scripts and property files the operator
// generated for a run against the sample's settings.
func checkPublishedFiles(ctx context.Context, h *harness, run *benchv1.BenchmarkRun, w publishedComparison) error {
	if len(w.files) == 0 {
		return nil
	}
	var cm corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: specs.FilesConfigMapName(run)}, &cm); err != nil {
		return err
	}
	for key, wants := range w.files {
		for _, s := range wants {
			if !strings.Contains(cm.Data[key], s) {
				h.T.Errorf("run %s: %s lacks %q:\n%s", run.Name, key, s, cm.Data[key])
			}
		}
	}
	// An external endpoint's host reaches the scripts (HammerDB); the
	// other tools take it on their command line, checked with the Job.
	if ext := run.Spec.Target.External; ext != nil && w.tool == "hammerdb" && !strings.Contains(cm.Data["build.tcl"], "_host "+ext.Host+"\n") {
		h.T.Errorf("run %s: the scripts do not connect to %s", run.Name, ext.Host)
	}
	return nil
}

// checkPublishedJob checks a Job's command line and placement against the
// sample.
func checkPublishedJob(t *testing.T, run *benchv1.BenchmarkRun, j *batchv1.Job, w publishedComparison) {
	t.Helper()
	if got := j.Spec.Template.Spec.NodeSelector["pool"]; got != "loadgen" {
		t.Errorf("job %s asks for pool %q, the sample's load generators run on loadgen", j.Name, got)
	}
	args := strings.Join(j.Spec.Template.Spec.Containers[0].Args, " ")
	if j.Labels[benchv1.LabelRole] == benchv1.RolePrepare {
		if w.prepare == nil {
			t.Fatalf("run %s has a prepare step, the sample has none: %s", run.Name, args)
		}
		for _, a := range w.prepareArgs {
			if !strings.Contains(args, a) {
				t.Errorf("prepare job %s lacks %q: %s", j.Name, a, args)
			}
		}
		for _, a := range slices.Concat(w.prepareNotArgs, w.notArgs) {
			if strings.Contains(args, a) {
				t.Errorf("prepare job %s has %q: %s", j.Name, a, args)
			}
		}
		return
	}
	step := -1
	for s := range w.steps {
		for rep := int32(1); rep <= max(run.Spec.Repetitions, 1); rep++ {
			if specs.MeasureJobName(run, s, rep) == j.Name {
				step = s
			}
		}
	}
	if step < 0 {
		t.Fatalf("job %s is no measurement of the sweep %v", j.Name, w.steps)
	}
	if got, want := ptrValue(j.Spec.Completions), max(w.generators, 1); got != want {
		t.Errorf("job %s (step %s): %d load generators, want %d", j.Name, w.steps[step], got, want)
	}
	wants := append([]string{}, w.args...)
	if step < len(w.stepArgs) {
		wants = append(wants, w.stepArgs[step])
	}
	if ext := run.Spec.Target.External; ext != nil && w.tool != "hammerdb" {
		wants = append(wants, fmt.Sprintf("%s:%d", ext.Host, ext.Port))
	}
	for _, a := range wants {
		if !strings.Contains(args, a) {
			t.Errorf("job %s (step %s) lacks %q: %s", j.Name, w.steps[step], a, args)
		}
	}
	for _, a := range w.notArgs {
		if strings.Contains(args, a) {
			t.Errorf("job %s (step %s) has %q: %s", j.Name, w.steps[step], a, args)
		}
	}
}

// checkPublishedComparison checks an ended comparison: its runs, their
// steps and placement, and its report.
func checkPublishedComparison(t *testing.T, h *harness, cmp *benchv1.BenchmarkComparison, w publishedComparison, placed map[string]string, shapes map[string][]string) {
	t.Helper()
	ctx := context.Background()
	// A comparison whose every measurement is excluded compared nothing,
	// and says so (NothingCompared, naming why) instead of Compared.
	wantPhase, wantReason := benchv1.ComparisonSucceeded, benchv1.ReasonCompared
	if w.runsEnd != benchv1.PhaseSucceeded {
		wantPhase, wantReason = benchv1.ComparisonFailed, benchv1.ReasonNothingCompared
	}
	if cmp.Status.Phase != wantPhase {
		t.Errorf("comparison %s ended %s, want %s: %+v", cmp.Name, cmp.Status.Phase, wantPhase, cmp.Status.Conditions)
		return
	}
	if c := meta.FindStatusCondition(cmp.Status.Conditions, benchv1.ConditionCompared); c == nil || c.Reason != wantReason ||
		(c.Status == metav1.ConditionTrue) != (wantReason == benchv1.ReasonCompared) || !strings.Contains(c.Message, w.invalidBecause) {
		t.Errorf("comparison %s: Compared %+v, want %s naming %q", cmp.Name, c, wantReason, w.invalidBecause)
	}
	var runs benchv1.BenchmarkRunList
	if err := k8s.List(ctx, &runs, client.InNamespace(h.NS), client.MatchingLabels{benchv1.LabelComparison: string(cmp.UID)}); err != nil {
		t.Fatal(err)
	}
	if want := publishedRunsPerVariant * len(cmp.Spec.Variants); len(runs.Items) != want {
		t.Errorf("comparison %s made %d runs, want %d", cmp.Name, len(runs.Items), want)
	}
	for _, run := range runs.Items {
		variant := run.Labels[benchv1.LabelVariant]
		if got := placed[run.Name]; w.pool == "" && !strings.Contains(got, variant) || w.pool != "" && got != w.pool {
			t.Errorf("run %s of variant %s: target placed on %q", run.Name, variant, got)
		}
		checkTopology(t, &run, w, shapes)
		if run.Status.Phase != w.runsEnd {
			t.Errorf("run %s ended %s, want %s: %s", run.Name, run.Status.Phase, w.runsEnd, mustCondition(&run))
		}
		if c := meta.FindStatusCondition(run.Status.Conditions, benchv1.ConditionValid); w.invalidBecause != "" && (c == nil || !strings.Contains(c.Message, w.invalidBecause)) {
			t.Errorf("run %s: Valid condition %+v does not say %q", run.Name, c, w.invalidBecause)
		}
		var steps []string
		for _, st := range run.Status.Steps {
			steps = append(steps, st.Name)
			if len(st.Repetitions) != 1 {
				t.Errorf("run %s step %s: %d measurements, want 1", run.Name, st.Name, len(st.Repetitions))
			}
		}
		if strings.Join(steps, " ") != strings.Join(w.steps, " ") {
			t.Errorf("run %s steps %v, want %v", run.Name, steps, w.steps)
		}
	}
	measurements := publishedRunsPerVariant * len(cmp.Spec.Variants) * len(w.steps)
	if w.runsEnd == benchv1.PhaseSucceeded {
		// Each candidate against the baseline, step by step.
		if cmp.Status.ExcludedMeasurements != 0 || len(cmp.Status.Results) != len(w.steps)*(len(cmp.Spec.Variants)-1) {
			t.Errorf("comparison %s: %d excluded, results %+v", cmp.Name, cmp.Status.ExcludedMeasurements, cmp.Status.Results)
		}
		for _, r := range cmp.Status.Results {
			if r.BaselineN != publishedRunsPerVariant || r.CandidateN != publishedRunsPerVariant {
				t.Errorf("comparison %s: %s %s compared %d against %d measurements", cmp.Name, r.Step, r.Metric, r.BaselineN, r.CandidateN)
			}
		}
	} else if int(cmp.Status.ExcludedMeasurements) != measurements {
		t.Errorf("comparison %s: %d measurements excluded, want all %d", cmp.Name, cmp.Status.ExcludedMeasurements, measurements)
	}
	var report corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: cmp.Status.ReportConfigMap}, &report); err != nil {
		t.Fatalf("comparison %s: report: %v", cmp.Name, err)
	}
	if report.Data["report.json"] == "" && len(report.BinaryData["report.json.gz"]) == 0 {
		t.Errorf("comparison %s: the report ConfigMap has no report.json: %v", cmp.Name, kit.Keys(report.Data))
	}
	if md := report.Data["report.md"]; md != "" && !strings.Contains(md, w.steps[len(w.steps)-1]) {
		t.Errorf("comparison %s: report.md does not name step %s:\n%.800s", cmp.Name, w.steps[len(w.steps)-1], md)
	}
	if w.tool == "query-bench" && w.runsEnd == benchv1.PhaseSucceeded {
		checkQueryRows(t, cmp.Name, &report, fixturePath(t, w.tool, w.fixture))
	}
}
