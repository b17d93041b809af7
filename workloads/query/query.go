package query

import (
	"path"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Query implements workloads.Workload for timed SQL queries.
type Query struct{}

var (
	_ workloads.Workload = Query{}
	_ workloads.Speaker  = Query{}
)

func (Query) Name() string { return "query-bench" }

// DefaultImage holds nothing the workload needs (the client is
// dbperf-runner itself, copied into every workload pod) but a shell for a
// prepare command; a generator such as dbgen needs an image of its own.
func (Query) DefaultImage() string { return "busybox:1.37" }

// Files of the invocations, under pod.FilesDir.
const (
	queriesFile = "queries.sql"
	scriptFile  = "prepare.sql"
)

// singleStep names the one step: the workload has no sweep.
const singleStep = "default"

func (Query) Steps(*benchv1.WorkloadSpec) []workloads.Step {
	return []workloads.Step{{Name: singleStep, Params: map[string]int32{}}}
}

func (Query) Run(spec *benchv1.WorkloadSpec, ep pod.Endpoint, _ workloads.Step) pod.Invocation {
	q := spec.QueryBench
	inv := pod.Invocation{
		Env:         ep.CredentialEnv(pod.EnvUsername, pod.EnvPassword),
		SecretEnv:   secretEnv(ep),
		ResultFiles: []string{pod.OutputDir + "/" + ResultFileName},
	}
	cmd := command(q, ep)
	if q.QueriesConfigMap != nil {
		f := pod.ConfigMapFile{ConfigMap: q.QueriesConfigMap.Name, Key: q.QueriesConfigMap.Key}
		inv.ConfigMapFiles = []pod.ConfigMapFile{f}
		cmd.Queries = pod.ConfigMapFilePath(f)
	} else {
		inv.Files = map[string]string{queriesFile: InlineQueries(q.Queries)}
		cmd.Queries = pod.FilesDir + "/" + queriesFile
	}
	cmd.Runs, cmd.Timeout = pod.DefaultRunsPerQuery, pod.DefaultQueryTimeout
	if q.RunsPerQuery >= 1 {
		cmd.Runs = int(q.RunsPerQuery)
	}
	if q.QueryTimeout != nil {
		cmd.Timeout = q.QueryTimeout.Duration
	}
	cmd.Settings = map[string]string{}
	for k, v := range q.Settings {
		cmd.Settings[k] = string(v)
	}
	cmd.Output = pod.OutputDir + "/" + ResultFileName
	inv.Command = cmd.Args()
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

func (Query) Prepare(spec *benchv1.WorkloadSpec, ep pod.Endpoint) *pod.Invocation {
	p := spec.QueryBench.Prepare
	if p == nil || (p.Script == "" && p.ScriptConfigMap == nil && len(p.Loads) == 0 && len(p.Command) == 0) {
		return nil
	}
	db := database(spec.QueryBench, ep)
	inv := &pod.Invocation{
		// A prepare command sees the target as a custom tool does.
		Env:       append(append(ep.CredentialEnv(pod.EnvUsername, pod.EnvPassword), ep.AddressEnv(db)...), ep.TLSEnv()...),
		SecretEnv: secretEnv(ep),
	}
	cmd := command(spec.QueryBench, ep)
	cmd.Prepare = true
	if p.Script != "" {
		inv.Files = map[string]string{scriptFile: p.Script}
		cmd.Scripts = append(cmd.Scripts, pod.FilesDir+"/"+scriptFile)
	}
	if s := p.ScriptConfigMap; s != nil {
		f := pod.ConfigMapFile{ConfigMap: s.Name, Key: s.Key}
		inv.ConfigMapFiles = append(inv.ConfigMapFiles, f)
		cmd.Scripts = append(cmd.Scripts, pod.ConfigMapFilePath(f))
	}
	mounted := map[string]bool{}
	for _, l := range p.Loads {
		source := l.URL
		if c := l.Claim; c != nil {
			dir := pod.ClaimsDir + "/" + c.ClaimName
			if !mounted[c.ClaimName] {
				inv.ClaimMounts = append(inv.ClaimMounts, pod.ClaimMount{Claim: c.ClaimName, MountPath: dir, ReadOnly: true})
				mounted[c.ClaimName] = true
			}
			source = path.Join(dir, c.Path)
		}
		cmd.Loads = append(cmd.Loads, pod.Load{Table: l.Table, Format: loadFormat(l.Format), Source: source})
	}
	cmd.Command = p.Command
	inv.Command = cmd.Args()
	return inv
}

func loadFormat(f benchv1.QueryLoadFormat) benchv1.QueryLoadFormat {
	if f == "" {
		return benchv1.QueryLoadCSV
	}
	return f
}

// command is the client's command reaching the target (credentials come
// from the environment).
func command(q *benchv1.QueryWorkload, ep pod.Endpoint) pod.QueryCommand {
	return pod.QueryCommand{Driver: q.Driver, Host: ep.Host, Port: int(ep.Port), Database: database(q, ep), TLS: ep.ClientTLS()}
}

func database(q *benchv1.QueryWorkload, ep pod.Endpoint) string {
	if q.Database != "" {
		return q.Database
	}
	return ep.Database
}

func secretEnv(ep pod.Endpoint) []string {
	if ep.Password == nil {
		return nil
	}
	return []string{pod.EnvPassword}
}

// Speaks: the protocol of the driver's server, in the queries' database:
// PostgreSQL's and MySQL's statistics are polled (none of ClickHouse's),
// and with the mysql driver each measurement's session is checked (TLS
// version and cipher negotiated, session variables), as HammerDB's.
func (Query) Speaks(spec *benchv1.WorkloadSpec) workloads.Speaks {
	if spec.QueryBench == nil {
		return workloads.Speaks{}
	}
	return workloads.Speaks{Protocol: protocols[spec.QueryBench.Driver], Database: spec.QueryBench.Database}
}

// protocols are the drivers' servers'.
var protocols = map[benchv1.QueryDriver]pod.Protocol{
	benchv1.QueryDriverPostgres: pod.ProtocolPostgres, benchv1.QueryDriverMySQL: pod.ProtocolMySQL, benchv1.QueryDriverClickHouse: pod.ProtocolClickHouse,
}
