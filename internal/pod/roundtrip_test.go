package pod

import (
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Every command of the runner, with every field set, renders to a command
// line that parses back to itself: a flag rendered under one name and read
// under another, a field the operator sets and no flag carries, or a flag
// one side knows and the other does not, fails here. everyFieldSet makes
// sure a new field cannot be left out of the cases.
func TestEveryCommandRoundTrips(t *testing.T) {
	tls := func(dir string) TLSClient {
		return TLSClient{Enabled: true, CAFile: dir + "/ca.crt", CertFile: dir + "/tls.crt", KeyFile: dir + "/tls.key", ServerName: dir + ".example"}
	}
	pct := func(f float64) *float64 { return &f }
	exec := ExecCommand{
		StartBarrier: StartAtFile, Generators: 4, Workload: "w",
		MaxLoadGeneratorCPUPercent: pct(85.5), MaxErrorPercent: pct(0),
		Stability: Stability{Warmup: 30 * time.Second, StallPercent: 12.5, MaxStall: 5 * time.Second, DipPercent: 40,
			MaxDip: 20 * time.Second, MaxDriftPercent: 7},
		Prepare: true, ResultFiles: []string{OutputDir + "/a.json", OutputDir + "/b.log"}, ParserConfig: FilesDir + "/c.json",
		SampleStream:    OutputDir + "/samples",
		DeclaredMetrics: []MetricDeclaration{{Name: "m", Unit: "ms", Direction: results.LowerIsBetter}, {Name: "n", Unit: "", Direction: results.Neutral}},
		APDEX:           []APDEXTarget{{Operation: "GET /?a=b", Target: 250 * time.Millisecond}, {Operation: results.AllOperations, Target: time.Second}},
		Stages:          []Stage{{Name: "stage 1 (to 5000 VUs)", End: 5 * time.Minute}, {Name: "a=b", End: 15 * time.Minute}},
		RedactEnv:       []string{"PGPASSWORD", EnvPassword},
		Statistics: Statistics{Protocol: ProtocolPostgres, Address: Address{Host: "fd00::1", Port: 5432}, Database: "tpcc",
			PollInterval: 2 * time.Second, TLS: tls("/stats"), Diagnostics: true, WaitInterval: 50 * time.Millisecond, Plans: true, ProfileHz: 99},
		Hosts: []HostEndpoint{{Name: "db-01", Role: "database", URL: "https://db-01.example:9100/metrics", Index: 0, Target: true, InsecureSkipVerify: true},
			{Name: "app-1", Role: "application", URL: "http://[fd00::2]:9100/metrics?collect[]=cpu", Index: 1}},
		HostPollInterval: 3 * time.Second,
		Disturbances: []RunnerDisturbance{{Name: "heavy", Kind: "sqlLoad", Offset: 90 * time.Second, Duration: 3 * time.Minute, Sessions: 8,
			Statements: []string{"SELECT 1, 'a b'", "SELECT pg_sleep(1);"}, Once: true, Administrator: true, Ledger: true,
			Protocol: ProtocolPostgres, Address: Address{Host: "fd00::1", Port: 5432}, Database: "app", TLS: tls("/disturb")}},
		SteadyUntil:  90 * time.Second,
		RestartAfter: 90 * time.Second, Canary: 1500 * time.Millisecond, CanaryDir: "/scratch",
		Session: SessionCheck{Address: Address{Host: "db.perf.svc", Port: 3306}, Protocol: ProtocolMySQL, TLS: tls("/session"),
			TLSVersion: "TLSv1.3", TLSCipher: "TLS_AES_128_GCM_SHA256", Variables: map[string]string{"autocommit": "ON", "sql_mode": "A=B"}},
		Timeout: 3585 * time.Second,
		Runner: RunnerSettings{SummaryFile: "/summary", CgroupRoot: "/cg", NoProgressTimeout: time.Minute, HardNoProgressTimeout: time.Hour,
			KillGrace: 3 * time.Second, CPUSampleInterval: time.Second, BarrierTimeout: time.Minute, SeriesResolution: 2 * time.Second,
			APDEXWindow: 30 * time.Second, SampleAggregation: SampleAggregationStream},
		Command: []string{"pgbench", "--client", "4", "--", "x"},
	}
	query := QueryCommand{Prepare: true, Driver: benchv1.QueryDriverMySQL, Host: "h", Port: 3306, Database: "d", TLS: tls("/q"),
		Queries: "/q.sql", Runs: 5, Timeout: 90 * time.Second, Settings: map[string]string{"max_threads": "1", "a": "b=c"},
		Output: "/out.json", Scripts: []string{"/a.sql", "/b.sql"},
		Loads:   []Load{{Table: "t", Format: benchv1.QueryLoadCSV, Source: "https://x/t.csv:gz"}, {Table: "u", Format: benchv1.QueryLoadTSV, Source: "/u"}},
		Command: []string{"sh", "-c", "gen | load"}}
	parse := ParseCommand{Workload: "w", Input: "/log", ExitCode: "3", MaxErrorPercent: 0.5, Prepare: true,
		ResultFiles: []string{"a.json=/saved/x.json"}, ParserConfig: "/c.json"}
	show := ShowCommand{Input: "/log", All: true}
	stress := StressCommand{CPUWorkers: 4, MemoryBytes: 2 << 30, DiskWorkers: 2, Dir: "/x", Duration: 90 * time.Second, SummaryFile: "/s"}

	for name, tc := range map[string]struct {
		command any
		args    []string
		parse   func([]string) (any, error)
	}{
		"exec": {exec, exec.Args(), func(a []string) (any, error) { return ParseExec(a[1:], io.Discard) }},
		"query": {query, query.Args(), func(a []string) (any, error) {
			if a[0] != RunnerPath || a[1] != CommandQuery {
				t.Fatalf("query starts %q", a[:2])
			}
			return ParseQuery(a[2:], io.Discard)
		}},
		"parse": {parse, parse.Args(), func(a []string) (any, error) { return ParseParse(a[1:], io.Discard) }},
		"show":  {show, show.Args(), func(a []string) (any, error) { return ParseShow(a[1:], io.Discard) }},
		"stress": {stress, stress.Args(), func(a []string) (any, error) {
			if a[0] != InstallerPath || a[1] != CommandStress {
				t.Fatalf("stress starts %q", a[:2])
			}
			return ParseStress(a[2:], io.Discard)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			for _, unset := range everyFieldSet(reflect.ValueOf(tc.command), name) {
				t.Errorf("%s is not set: the round trip would not test its flag", unset)
			}
			got, err := tc.parse(tc.args)
			if err != nil {
				t.Fatalf("%q: %v", tc.args, err)
			}
			if diff := cmp.Diff(tc.command, got); diff != "" {
				t.Errorf("rendered as %q, parsed back with a difference (-rendered +parsed):\n%s", tc.args, diff)
			}
		})
	}
}

// everyFieldSet names the fields of v, through nested structs, that hold
// their zero value.
func everyFieldSet(v reflect.Value, path string) []string {
	if v.Kind() != reflect.Struct {
		if v.IsZero() || (v.Kind() == reflect.Slice || v.Kind() == reflect.Map) && v.Len() == 0 {
			return []string{path}
		}
		return nil
	}
	var out []string
	for i := range v.NumField() {
		out = append(out, everyFieldSet(v.Field(i), path+"."+v.Type().Field(i).Name)...)
	}
	return out
}

// A command's flags render nothing for a field at zero, so that the
// runner's default applies, and the thresholds the operator always writes
// render even at zero.
func TestZeroFieldsRenderNothing(t *testing.T) {
	zero := 0.0
	for name, tc := range map[string]struct {
		got, want []string
	}{
		"exec":       {ExecCommand{}.Args(), []string{CommandExec, "--"}},
		"thresholds": {ExecCommand{MaxLoadGeneratorCPUPercent: &zero, MaxErrorPercent: &zero}.Flags(), []string{"--max-cpu-percent", "0", "--max-error-percent", "0"}},
		"query":      {QueryCommand{}.Args(), []string{RunnerPath, CommandQuery}},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	c, err := ParseExec([]string{"--", "tool"}, io.Discard)
	if err != nil || *c.MaxLoadGeneratorCPUPercent != DefaultMaxLoadGeneratorCPUPercent || c.Generators != DefaultGenerators ||
		c.Statistics.PollInterval != DefaultPollInterval || c.Runner.SummaryFile != TerminationLog {
		t.Errorf("defaults: %+v (%v)", c, err)
	}
}
