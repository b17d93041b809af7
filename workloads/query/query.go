package query

import (
	"path"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/dbstats"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/custom"
)

// Query implements workloads.Workload for timed SQL queries.
type Query struct{}

var (
	_ workloads.Workload         = Query{}
	_ workloads.ServerStatistics = Query{}
)

func (Query) Name() string { return "query-bench" }

// DefaultImage holds nothing the workload needs (the client is
// dbperf-runner itself, copied into every workload pod) but a shell for a
// prepare command; a generator such as dbgen needs an image of its own.
func (Query) DefaultImage() string { return "busybox:1.37" }

// runnerPath is where every workload pod has dbperf-runner
// (internal/specs.RunnerPath, which this package cannot import).
const runnerPath = "/dbperf/bin/dbperf-runner"

// Subcommand is the runner's command that runs the queries and the
// prepare step.
const Subcommand = "query"

// Files of the invocations, under workloads.FilesDir.
const (
	queriesFile = "queries.sql"
	scriptFile  = "prepare.sql"
)

// claimsDir is where the loads' claims are mounted, one directory each.
const claimsDir = "/dbperf-data"

// singleStep names the one step: the workload has no sweep.
const singleStep = "default"

func (Query) Steps(*benchv1.WorkloadSpec) []workloads.Step {
	return []workloads.Step{{Name: singleStep, Params: map[string]int32{}}}
}

// DefaultRunsPerQuery and DefaultQueryTimeout are the schema's defaults.
const (
	DefaultRunsPerQuery = 3
	DefaultQueryTimeout = "10m"
)

func (Query) Run(spec *benchv1.WorkloadSpec, ep workloads.Endpoint, _ workloads.Step) workloads.Invocation {
	q := spec.QueryBench
	inv := workloads.Invocation{
		Env:         ep.CredentialEnv(workloads.EnvUsername, workloads.EnvPassword),
		SecretEnv:   secretEnv(ep),
		ResultFiles: []string{workloads.OutputDir + "/" + ResultFileName},
	}
	cmd := append([]string{runnerPath, Subcommand}, endpointArgs(q, ep)...)
	if q.QueriesConfigMap != nil {
		f := workloads.ConfigMapFile{ConfigMap: q.QueriesConfigMap.Name, Key: q.QueriesConfigMap.Key}
		inv.ConfigMapFiles = []workloads.ConfigMapFile{f}
		cmd = append(cmd, "--queries", workloads.ConfigMapFilePath(f))
	} else {
		inv.Files = map[string]string{queriesFile: InlineQueries(q.Queries)}
		cmd = append(cmd, "--queries", workloads.FilesDir+"/"+queriesFile)
	}
	runs := q.RunsPerQuery
	if runs < 1 {
		runs = DefaultRunsPerQuery
	}
	timeout := DefaultQueryTimeout
	if q.QueryTimeout != nil {
		timeout = q.QueryTimeout.Duration.String()
	}
	cmd = append(cmd, "--runs", strconv.Itoa(int(runs)), "--timeout", timeout)
	keys := make([]string, 0, len(q.Settings))
	for k := range q.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd = append(cmd, "--setting", k+"="+string(q.Settings[k]))
	}
	cmd = append(cmd, "--output", workloads.OutputDir+"/"+ResultFileName)
	inv.Command = cmd
	return inv
}

// InlineQueries renders the spec's queries as a queries file: each named
// by a comment, its semicolon on a line of its own (after a last line
// that may be a comment). Validate has made sure each is one statement.
func InlineQueries(qs []benchv1.NamedQuery) string {
	var out []byte
	for _, q := range qs {
		out = append(out, "-- name: "+q.Name+"\n"+trimStatement(q.SQL)+"\n;\n"...)
	}
	return string(out)
}

func (Query) Prepare(spec *benchv1.WorkloadSpec, ep workloads.Endpoint) *workloads.Invocation {
	p := spec.QueryBench.Prepare
	if p == nil || (p.Script == "" && p.ScriptConfigMap == nil && len(p.Loads) == 0 && len(p.Command) == 0) {
		return nil
	}
	inv := &workloads.Invocation{
		Env:       append(ep.CredentialEnv(workloads.EnvUsername, workloads.EnvPassword), targetEnv(spec.QueryBench, ep)...),
		SecretEnv: secretEnv(ep),
	}
	cmd := append([]string{runnerPath, Subcommand, "--prepare"}, endpointArgs(spec.QueryBench, ep)...)
	if p.Script != "" {
		inv.Files = map[string]string{scriptFile: p.Script}
		cmd = append(cmd, "--script", workloads.FilesDir+"/"+scriptFile)
	}
	if s := p.ScriptConfigMap; s != nil {
		f := workloads.ConfigMapFile{ConfigMap: s.Name, Key: s.Key}
		inv.ConfigMapFiles = append(inv.ConfigMapFiles, f)
		cmd = append(cmd, "--script", workloads.ConfigMapFilePath(f))
	}
	mounted := map[string]bool{}
	for _, l := range p.Loads {
		source := l.URL
		if c := l.Claim; c != nil {
			dir := claimsDir + "/" + c.ClaimName
			if !mounted[c.ClaimName] {
				inv.ClaimMounts = append(inv.ClaimMounts, workloads.ClaimMount{Claim: c.ClaimName, MountPath: dir, ReadOnly: true})
				mounted[c.ClaimName] = true
			}
			source = path.Join(dir, c.Path)
		}
		cmd = append(cmd, "--load", LoadFlag(Load{Table: l.Table, Format: loadFormat(l.Format), Source: source}))
	}
	if len(p.Command) > 0 {
		cmd = append(append(cmd, "--"), p.Command...)
	}
	inv.Command = cmd
	return inv
}

// LoadFlag renders a load as --load takes it: TABLE:FORMAT:SOURCE (a
// table name and a format hold no colon).
func LoadFlag(l Load) string {
	return l.Table + ":" + string(l.Format) + ":" + l.Source
}

func loadFormat(f benchv1.QueryLoadFormat) benchv1.QueryLoadFormat {
	if f == "" {
		return benchv1.QueryLoadCSV
	}
	return f
}

// endpointArgs are the flags that reach the target (credentials come
// from the environment).
func endpointArgs(q *benchv1.QueryWorkload, ep workloads.Endpoint) []string {
	args := []string{"--driver", string(q.Driver), "--host", ep.Host, "--port", strconv.Itoa(int(ep.Port))}
	if db := database(q, ep); db != "" {
		args = append(args, "--database", db)
	}
	if !ep.TLS {
		return args
	}
	args = append(args, "--tls")
	if ep.CASecret != "" {
		args = append(args, "--ca-file", workloads.CAFile)
	}
	if ep.ClientCertSecret != "" {
		args = append(args, "--cert-file", workloads.ClientCertFile, "--key-file", workloads.ClientKeyFile)
	}
	if ep.ServerName != "" {
		args = append(args, "--server-name", ep.ServerName)
	}
	return args
}

func database(q *benchv1.QueryWorkload, ep workloads.Endpoint) string {
	if q.Database != "" {
		return q.Database
	}
	return ep.Database
}

// targetEnv is the target as a prepare command sees it: the custom
// workload's DBPERF_TARGET_* variables.
func targetEnv(q *benchv1.QueryWorkload, ep workloads.Endpoint) []corev1.EnvVar {
	env := []corev1.EnvVar{
		{Name: custom.EnvHost, Value: ep.Host},
		{Name: custom.EnvPort, Value: strconv.Itoa(int(ep.Port))},
	}
	if db := database(q, ep); db != "" {
		env = append(env, corev1.EnvVar{Name: custom.EnvDatabase, Value: db})
	}
	env = append(env, corev1.EnvVar{Name: custom.EnvTLS, Value: strconv.FormatBool(ep.TLS)})
	if ep.TLS && ep.CASecret != "" {
		env = append(env, corev1.EnvVar{Name: custom.EnvCAFile, Value: workloads.CAFile})
	}
	if ep.TLS && ep.ClientCertSecret != "" {
		env = append(env, corev1.EnvVar{Name: custom.EnvCertFile, Value: workloads.ClientCertFile},
			corev1.EnvVar{Name: custom.EnvKeyFile, Value: workloads.ClientKeyFile})
	}
	if ep.TLS && ep.ServerName != "" {
		env = append(env, corev1.EnvVar{Name: custom.EnvServerName, Value: ep.ServerName})
	}
	return env
}

func secretEnv(ep workloads.Endpoint) []string {
	if ep.Password == nil {
		return nil
	}
	return []string{workloads.EnvPassword}
}

// ServerStatistics: PostgreSQL's and MySQL's statistics, in the queries'
// database; none for ClickHouse, which dbstats does not read.
func (Query) ServerStatistics(spec *benchv1.WorkloadSpec) (string, string) {
	if spec.QueryBench == nil {
		return "", ""
	}
	switch spec.QueryBench.Driver {
	case benchv1.QueryDriverPostgres:
		return dbstats.SourcePostgreSQL, spec.QueryBench.Database
	case benchv1.QueryDriverMySQL:
		return dbstats.SourceMySQL, spec.QueryBench.Database
	}
	return "", ""
}

// SQLProtocol: with the mysql driver each measurement's session is checked
// (TLS version and cipher negotiated, session variables), as HammerDB's.
func (Query) SQLProtocol(spec *benchv1.WorkloadSpec) string {
	if spec.QueryBench == nil {
		return ""
	}
	switch spec.QueryBench.Driver {
	case benchv1.QueryDriverMySQL:
		return workloads.ProtocolMySQL
	case benchv1.QueryDriverPostgres:
		return workloads.ProtocolPostgreSQL
	}
	return ""
}
