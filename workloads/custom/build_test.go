package custom

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

func sysbench() *benchv1.WorkloadSpec {
	return &benchv1.WorkloadSpec{Image: "registry.example/sysbench:1.0.20", Parallelism: 2, Custom: &benchv1.CustomWorkload{
		Command: []string{"sysbench", "oltp_read_only"},
		Args:    []string{"--threads={{threads}}", "--tables={{tables}}", "--time=60", "run"},
		Env:     []benchv1.CustomEnvVar{{Name: "MYSQL_HOST", Value: "$(DBPERF_TARGET_HOST)"}, {Name: "SB_TABLES", Value: "{{tables}}"}},
		Parameters: []benchv1.CustomParameter{
			{Name: "threads", Values: []int32{8, 16}},
			{Name: "tables", Values: []int32{4}},
		},
		Duration:      &metav1.Duration{Duration: time.Minute},
		Format:        benchv1.CustomLines,
		ResultFile:    "sysbench.txt",
		PrimaryMetric: benchv1.CustomMetricKey{Name: "transactionsPerSecond"},
		Metrics:       []benchv1.CustomMetric{{Name: "reconnects", Unit: "count", Direction: benchv1.LowerIsBetter}},
		Database:      benchv1.CustomMySQL,
	}}
}

// The sweep is the cartesian product of the parameters, first varying
// slowest; every placeholder of command, args and env holds the step's
// value.
func TestRunSubstitutesTheStepsValues(t *testing.T) {
	spec := sysbench()
	steps := Custom{}.Steps(spec)
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"threads=8,tables=4", "threads=16,tables=4"}, names); diff != "" {
		t.Fatalf("steps (-want +got):\n%s", diff)
	}
	ep := pod.Endpoint{Host: "db.example", Port: 3306, Database: "sbtest", Username: secretKey("username"), Password: secretKey("password"),
		TLS: true, CASecret: "ca", ClientCertSecret: "client", ServerName: "db.internal"}
	inv := Custom{}.Run(spec, ep, steps[1])
	if diff := cmp.Diff([]string{"sysbench", "oltp_read_only", "--threads=16", "--tables=4", "--time=60", "run"}, inv.Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	want := []corev1.EnvVar{
		{Name: "DBPERF_TARGET_HOST", Value: "db.example"},
		{Name: "DBPERF_TARGET_PORT", Value: "3306"},
		{Name: "DBPERF_TARGET_DATABASE", Value: "sbtest"},
		{Name: "DBPERF_TARGET_USERNAME", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: secretKey("username")}},
		{Name: "DBPERF_TARGET_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: secretKey("password")}},
		{Name: "DBPERF_TARGET_TLS", Value: "true"},
		{Name: "DBPERF_TARGET_CA_FILE", Value: "/etc/dbperf/tls/ca.crt"},
		{Name: "DBPERF_TARGET_CERT_FILE", Value: "/etc/dbperf/tls/tls.crt"},
		{Name: "DBPERF_TARGET_KEY_FILE", Value: "/etc/dbperf/tls/tls.key"},
		{Name: "DBPERF_TARGET_SERVER_NAME", Value: "db.internal"},
		{Name: "DBPERF_OUTPUT_DIR", Value: "/dbperf/out"},
		{Name: "DBPERF_RESULT_FILE", Value: "/dbperf/out/sysbench.txt"},
		{Name: "DBPERF_DURATION_SECONDS", Value: "60"},
		{Name: "DBPERF_GENERATORS", Value: "2"},
		{Name: "DBPERF_STEP", Value: "threads=16,tables=4"},
		// The user's, after the operator's: the kubelet expands $(VAR)
		// references to earlier variables.
		{Name: "MYSQL_HOST", Value: "$(DBPERF_TARGET_HOST)"},
		{Name: "SB_TABLES", Value: "4"},
	}
	if diff := cmp.Diff(want, inv.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"DBPERF_TARGET_PASSWORD"}, inv.SecretEnv); diff != "" {
		t.Errorf("secret env (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/dbperf/out/sysbench.txt"}, inv.ResultFiles); diff != "" {
		t.Errorf("result files (-want +got):\n%s", diff)
	}
	if inv.ParserConfig != "/etc/dbperf/workload/custom-parser.json" {
		t.Errorf("parser configuration at %q", inv.ParserConfig)
	}
	var cfg parserConfig
	if err := json.Unmarshal([]byte(inv.Files["custom-parser.json"]), &cfg); err != nil {
		t.Fatal(err)
	}
	wantCfg := parserConfig{Version: 1, Tool: "sysbench", Format: benchv1.CustomLines, ResultFile: "sysbench.txt",
		Primary: results.Key{Name: "transactionsPerSecond"}, Metrics: []declaration{{Name: "reconnects", Unit: "count", Direction: results.LowerIsBetter}}}
	if diff := cmp.Diff(wantCfg, cfg); diff != "" {
		t.Errorf("parser configuration (-want +got):\n%s", diff)
	}
}

func TestPrepareAndDefaults(t *testing.T) {
	spec := &benchv1.WorkloadSpec{Image: "x", Custom: &benchv1.CustomWorkload{Command: []string{"sh", "/scripts/run.sh"}, Format: benchv1.CustomOpenMetrics,
		PrimaryMetric: benchv1.CustomMetricKey{Name: "ops_per_second"}}}
	ep := pod.Endpoint{Host: "cache", Port: 6379}
	if inv := (Custom{}).Prepare(spec, ep); inv != nil {
		t.Errorf("a prepare step without prepare: %+v", inv)
	}
	steps := Custom{}.Steps(spec)
	if len(steps) != 1 || steps[0].Name != "default" {
		t.Fatalf("steps %+v, want one named default", steps)
	}
	inv := Custom{}.Run(spec, ep, steps[0])
	if len(inv.ResultFiles) != 0 || inv.SecretEnv != nil {
		t.Errorf("result files %v, secret env %v", inv.ResultFiles, inv.SecretEnv)
	}
	for _, e := range inv.Env {
		if e.Name == "DBPERF_TARGET_CA_FILE" || e.Name == "DBPERF_RESULT_FILE" || e.Name == "DBPERF_DURATION_SECONDS" {
			t.Errorf("%s set: %+v", e.Name, inv.Env)
		}
	}
	if !strings.Contains(inv.Files["custom-parser.json"], `"tool":"sh run.sh"`) {
		t.Errorf("an interpreter's script names the tool: %s", inv.Files["custom-parser.json"])
	}
	spec.Custom.Prepare = &benchv1.CustomPrepare{Command: []string{"sh", "/scripts/load.sh"}, Args: []string{"--rows", "1000"}}
	spec.Custom.Parameters = []benchv1.CustomParameter{{Name: "clients", Values: []int32{8}}}
	spec.Custom.Env = []benchv1.CustomEnvVar{{Name: "ROWS", Value: "1000"}, {Name: "CLIENTS", Value: "{{clients}}"}}
	prep := Custom{}.Prepare(spec, ep)
	if last := prep.Env[len(prep.Env)-1]; last.Name != "ROWS" {
		t.Errorf("the prepare step, of no step, got %+v last: a variable holding a placeholder", last)
	}
	if diff := cmp.Diff([]string{"sh", "/scripts/load.sh", "--rows", "1000"}, prep.Command); diff != "" {
		t.Errorf("prepare command (-want +got):\n%s", diff)
	}
	if prep.ParserConfig != "" || len(prep.Files) != 0 {
		t.Errorf("a prepare step is judged by its exit code: %+v", prep)
	}
}

// The pod polls the statistics of the database the tool drives, whose
// protocol every database the spec may name has.
func TestServerStatisticsOfTheDatabaseTheToolDrives(t *testing.T) {
	for db, want := range map[benchv1.CustomDatabase]pod.Protocol{
		"": "", benchv1.CustomPostgres: pod.ProtocolPostgres, benchv1.CustomMySQL: pod.ProtocolMySQL,
		benchv1.CustomValkey: pod.ProtocolRedis, benchv1.CustomMongoDB: pod.ProtocolMongoDB, benchv1.CustomOpenSearch: pod.ProtocolOpenSearch,
	} {
		spec := sysbench()
		spec.Custom.Database = db
		got := workloads.SpeaksOf(Custom{}, spec)
		if got != (workloads.Speaks{Protocol: want}) || db != "" && !got.Protocol.HasStatistics() {
			t.Errorf("%q: %+v, want %q with statistics", db, got, want)
		}
	}
}

// What the schema checks, the operator re-checks, naming each placeholder
// at its index; the size of the sweep only the operator checks.
func TestValidate(t *testing.T) {
	cases := map[string]struct {
		mutate func(*benchv1.WorkloadSpec)
		want   []string
	}{
		"valid": {func(*benchv1.WorkloadSpec) {}, nil},
		"an unknown placeholder in args": {func(s *benchv1.WorkloadSpec) { s.Custom.Args[0] = "--threads={{thread}}" },
			[]string{"spec.workload.custom.args[0]: Invalid value: \"--threads={{thread}}\": unknown placeholder {{thread}}: the placeholders of parameters are {{threads}}, {{tables}}"}},
		"an unknown placeholder in the command": {func(s *benchv1.WorkloadSpec) { s.Custom.Command[1] = "oltp_{{mode}}" },
			[]string{"spec.workload.custom.command[1]: Invalid value: \"oltp_{{mode}}\": unknown placeholder {{mode}}"}},
		"an unknown placeholder in env": {func(s *benchv1.WorkloadSpec) { s.Custom.Env[1].Value = "{{ tables }}" },
			[]string{"spec.workload.custom.env[1].value: Invalid value: \"{{ tables }}\": unknown placeholder {{ tables }}"}},
		"an unclosed placeholder": {func(s *benchv1.WorkloadSpec) { s.Custom.Args[1] = "--tables={{tables" },
			[]string{"spec.workload.custom.args[1]: Invalid value: \"--tables={{tables\": a {{ that begins no placeholder"}},
		"JSON in an argument": {func(s *benchv1.WorkloadSpec) { s.Custom.Args[1] = `--config={"pool":{"size":{{tables}}}}` }, nil},
		"no parameters to name": {func(s *benchv1.WorkloadSpec) { s.Custom.Parameters = nil }, []string{
			"spec.workload.custom.args[0]: Invalid value: \"--threads={{threads}}\": unknown placeholder {{threads}}: spec.workload.custom.parameters is empty",
			"spec.workload.custom.args[1]: Invalid value: \"--tables={{tables}}\": unknown placeholder {{tables}}",
			"spec.workload.custom.env[1].value: Invalid value: \"{{tables}}\": unknown placeholder {{tables}}",
		}},
		"a placeholder in prepare": {func(s *benchv1.WorkloadSpec) {
			s.Custom.Prepare = &benchv1.CustomPrepare{Command: []string{"sysbench"}, Args: []string{"--tables={{tables}}", "prepare"}}
		}, []string{"spec.workload.custom.prepare.args[0]: Invalid value: \"--tables={{tables}}\": prepare runs once, before every step"}},
		"an operator's variable": {func(s *benchv1.WorkloadSpec) { s.Custom.Env[0].Name = "DBPERF_TARGET_HOST" },
			[]string{"spec.workload.custom.env[0].name: Invalid value: \"DBPERF_TARGET_HOST\": DBPERF_ variables are set by the operator"}},
		"no image": {func(s *benchv1.WorkloadSpec) { s.Image = "" },
			[]string{"spec.workload.image: Required value: custom has no default image"}},
		"a sweep too large": {func(s *benchv1.WorkloadSpec) {
			s.Custom.Parameters[0].Values = make([]int32, 32)
			s.Custom.Parameters[1].Values = make([]int32, 9)
			for _, p := range s.Custom.Parameters {
				for i := range p.Values {
					p.Values[i] = int32(i)
				}
			}
		}, []string{"spec.workload.custom.parameters: Too many: 288: must have at most 256 items"}},
		"a value twice (two steps of one name)": {func(s *benchv1.WorkloadSpec) {
			s.Custom.Parameters[0].Values = []int32{4, 8, 4}
		}, []string{"spec.workload.custom.parameters[0].values[2]: Duplicate value: 4"}},
		"a parameter twice": {func(s *benchv1.WorkloadSpec) { s.Custom.Parameters[1].Name = "threads" }, []string{
			"spec.workload.custom.parameters[1].name: Duplicate value: \"threads\"",
			"spec.workload.custom.args[1]: Invalid value: \"--tables={{tables}}\": unknown placeholder {{tables}}: the placeholders of parameters are {{threads}}",
			"spec.workload.custom.env[1].value: Invalid value: \"{{tables}}\": unknown placeholder {{tables}}",
		}},
		"a result file in a directory": {func(s *benchv1.WorkloadSpec) { s.Custom.ResultFile = "../etc/passwd" },
			[]string{"spec.workload.custom.resultFile: Invalid value: \"../etc/passwd\""}},
		"an empty declaration": {func(s *benchv1.WorkloadSpec) {
			s.Custom.Metrics = append(s.Custom.Metrics, benchv1.CustomMetric{Name: "rows"})
		},
			[]string{"spec.workload.custom.metrics[1]: Required value: a declaration gives a unit, a direction or both"}},
		"an unknown format": {func(s *benchv1.WorkloadSpec) { s.Custom.Format = "CSV" },
			[]string{"spec.workload.custom.format: Unsupported value: \"CSV\""}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			spec := sysbench()
			c.mutate(spec)
			errs := Custom{}.Validate(spec, field.NewPath("spec", "workload"))
			if len(errs) != len(c.want) {
				t.Fatalf("%d errors, want %d: %v", len(errs), len(c.want), errs)
			}
			for i, w := range c.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %q does not say %q", errs[i].Error(), w)
				}
			}
		})
	}
}

// The placeholders the schema finds are the ones expand replaces.
func TestExpand(t *testing.T) {
	params := map[string]int32{"threads": 16, "rows": 0}
	for in, want := range map[string]string{
		"--threads={{threads}}":       "--threads=16",
		"{{threads}}x{{rows}}":        "16x0",
		"{{threads}}{{threads}}":      "1616",
		"no placeholder":              "no placeholder",
		"{ \"json\": {\"a\": 1} }":    "{ \"json\": {\"a\": 1} }",
		"awk '{print $1}'":            "awk '{print $1}'",
		"{{{threads}}}":               "{16}",
		"{{dbperf.segment}} is later": "{{dbperf.segment}} is later",
	} {
		if got := expand(in, params, false); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// A custom tool's rate knob: the parameter named rate, each load
// generator its exact share in the command ({{rate}}), the whole rate in
// a variable; a held level's duration in DBPERF_DURATION_SECONDS; and the
// settings a rate run needs, refused naming their field.
func TestRateLevelsOfACustomTool(t *testing.T) {
	spec := sysbench()
	spec.Parallelism = 4
	spec.Custom.Args = []string{"--rate={{rate}}", "--threads={{threads}}", "--time=60", "run"}
	spec.Custom.Env = []benchv1.CustomEnvVar{{Name: "SB_RATE", Value: "{{rate}}"}}
	spec.Custom.Parameters = []benchv1.CustomParameter{{Name: "threads", Values: []int32{8}}, {Name: "rate", Values: []int32{100}}}
	step := Custom{}.Steps(spec)[0]
	step.Params[workloads.RateParameter], step.Params[workloads.DurationParameter] = 1601, 900
	inv := Custom{}.Run(spec, pod.Endpoint{Host: "db", Port: 3306}, step)
	var shares []string
	for i := range 4 {
		shares = append(shares, runner.ForGenerator(inv.Command, i, 4)[2])
	}
	if got := strings.Join(shares, " "); got != "--rate=401 --rate=400 --rate=400 --rate=400" {
		t.Errorf("shares %s of %q", got, inv.Command)
	}
	env := map[string]string{}
	for _, e := range inv.Env {
		env[e.Name] = e.Value
	}
	if env["SB_RATE"] != "1601" || env[pod.EnvDurationSeconds] != "900" {
		t.Errorf("env %v", env)
	}
	if (Custom{}).RateCorrected(spec) {
		t.Error("corrected unless the tool says so")
	}
	capRate := &benchv1.CapacitySpec{Parameter: "rate", Soak: &benchv1.CapacitySoak{Percent: 75}}
	path := field.NewPath("spec", "capacity")
	if errs := (Custom{}).CheckCapacity(spec, capRate, path); len(errs) != 1 || errs[0].Field != "spec.workload.custom.env[0].value" {
		t.Errorf("a variable's rate with four generators: %v", errs)
	}
	spec.Custom.Env, spec.Custom.Args, spec.Custom.Duration = nil, []string{"--threads={{threads}}"}, nil
	errs := (Custom{}).CheckCapacity(spec, capRate, path)
	if len(errs) != 2 || errs[0].Field != "spec.workload.custom.duration" || errs[1].Field != "spec.workload.custom.command" {
		t.Errorf("no duration, no {{rate}}: %v", errs)
	}
	spec.Custom.LatencyFromIntendedStart = true
	if !(Custom{}).RateCorrected(spec) {
		t.Error("the tool says it is corrected")
	}
}
