package pod

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// QueryCommand is `dbperf-runner query`, the query workload's client: it
// times each query of a queries file, or (Prepare) runs the scripts and
// loads and then Command. The credentials come from EnvUsername and
// EnvPassword.
type QueryCommand struct {
	Prepare  bool
	Driver   benchv1.QueryDriver
	Host     string
	Port     int
	Database string
	TLS      TLSClient
	// Queries is the queries file; Runs, Timeout and Settings apply to
	// each query; Output receives the report ("-": stdout).
	Queries  string
	Runs     int
	Timeout  time.Duration
	Settings map[string]string
	Output   string
	// Scripts, Loads and Command are the prepare step's.
	Scripts []string
	Loads   []Load
	Command []string
}

// Load is a CSV or TSV file (a URL or a path; .gz is decompressed)
// inserted into a table.
type Load struct {
	Table  string
	Format benchv1.QueryLoadFormat
	Source string
}

func (c *QueryCommand) bind(t *flagTable) {
	t.boolean(&c.Prepare, flagPrepare, "run the prepare step (scripts, loads, then the command after --) instead of the queries")
	t.str((*string)(&c.Driver), flagDriver, "", fmt.Sprintf("%s (HTTP interface), %s or %s", benchv1.QueryDriverClickHouse, benchv1.QueryDriverPostgres, benchv1.QueryDriverMySQL))
	t.str(&c.Host, flagHost, "", "the target's host")
	t.integer(&c.Port, flagPort, 0, "the target's port (the HTTP port of an HTTP interface)")
	t.str(&c.Database, flagDatabase, "", "the database the statements run in")
	c.TLS.bind(t, queryTLSFlags)
	t.str(&c.Queries, flagQueries, "", "queries file: statements ended by semicolons, each named by a `-- name: X` line before it")
	t.integer(&c.Runs, flagRuns, DefaultRunsPerQuery, "runs of each query in a row")
	t.duration(&c.Timeout, flagTimeout, DefaultQueryTimeout, "bound of one run of one query (0: none)")
	t.pairs(&c.Settings, flagSetting, "NAME=VALUE: a server setting of every query (repeatable)")
	t.str(&c.Output, flagOutput, "-", "where the JSON report goes (- is stdout)")
	t.list(&c.Scripts, flagScript, "prepare: a SQL script to run, statements ended by semicolons (repeatable)")
	listOf(t, &c.Loads, flagLoad, formatLoad, parseLoad, "prepare: TABLE:FORMAT:SOURCE, a CSV or TSV file (URL or path; .gz is decompressed) to insert (repeatable)")
}

// Args is the command line, from RunnerPath: the tool's command of an
// Invocation.
func (c QueryCommand) Args() []string {
	var t flagTable
	c.bind(&t)
	args := append([]string{RunnerPath, CommandQuery}, t.render()...)
	if len(c.Command) > 0 {
		args = append(append(args, "--"), c.Command...)
	}
	return args
}

// ParseQuery reads query's arguments (after "query").
func ParseQuery(args []string, output io.Writer) (QueryCommand, error) {
	var c QueryCommand
	t := flagTable{parsing: true}
	c.bind(&t)
	rest, err := t.parse(CommandQuery, args, output)
	if len(rest) > 0 {
		c.Command = rest
	}
	return c, err
}

// Validate checks what the flags cannot.
func (c QueryCommand) Validate() error {
	switch {
	case c.Driver != benchv1.QueryDriverClickHouse && c.Driver != benchv1.QueryDriverPostgres && c.Driver != benchv1.QueryDriverMySQL:
		return fmt.Errorf("--%s %q: want %s, %s or %s", flagDriver, c.Driver, benchv1.QueryDriverClickHouse, benchv1.QueryDriverPostgres, benchv1.QueryDriverMySQL)
	case c.Host == "" || c.Port <= 0:
		return fmt.Errorf("--%s and --%s are required", flagHost, flagPort)
	case !c.Prepare && c.Queries == "":
		return fmt.Errorf("--%s is required", flagQueries)
	case !c.Prepare && (c.Runs < 1 || c.Runs > 100):
		return fmt.Errorf("--%s %d: want 1 to 100", flagRuns, c.Runs)
	case !c.Prepare && len(c.Command) > 0:
		return fmt.Errorf("a command after -- is for --%s only", flagPrepare)
	}
	return nil
}

// formatLoad writes TABLE:FORMAT:SOURCE (a table name and a format hold
// no colon).
func formatLoad(l Load) string {
	return l.Table + ":" + string(l.Format) + ":" + l.Source
}

func parseLoad(v string) (Load, error) {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) != 3 || parts[0] == "" || parts[2] == "" ||
		(parts[1] != string(benchv1.QueryLoadCSV) && parts[1] != string(benchv1.QueryLoadTSV)) {
		return Load{}, errors.New("want TABLE:CSV|TSV:SOURCE")
	}
	return Load{Table: parts[0], Format: benchv1.QueryLoadFormat(parts[1]), Source: parts[2]}, nil
}
