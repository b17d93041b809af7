package query

import (
	"encoding/json"
	"time"
)

// ReportVersion is the version of Report's JSON; Parse refuses others.
const ReportVersion = 1

// ResultFileName is the base name of the report `dbperf-runner query`
// writes in pod.OutputDir.
const ResultFileName = "query-result.json"

// Report is what `dbperf-runner query` measured: every run of every query,
// in order, as the client timed it. Parse turns it into a Result.
type Report struct {
	Version int    `json:"version"`
	Driver  string `json:"driver"`
	// ClientVersion is dbperf-runner's version; ServerVersion what the
	// server said it is.
	ClientVersion string      `json:"clientVersion,omitempty"`
	ServerVersion string      `json:"serverVersion,omitempty"`
	RunsPerQuery  int         `json:"runsPerQuery"`
	Start         time.Time   `json:"start"`
	End           time.Time   `json:"end"`
	Queries       []QueryRuns `json:"queries"`
	// ServerCertificateVerified says, over TLS, whether the client
	// verified the server's certificate (pod.TLSClient: not without a CA).
	ServerCertificateVerified *bool `json:"serverCertificateVerified,omitempty"`
	// Error is why the measurement stopped before every query ran (the
	// server could not be reached); the queries it did run are kept.
	Error string `json:"error,omitempty"`
}

// QueryRuns are the runs of one query.
type QueryRuns struct {
	Name string `json:"name"`
	Runs []Run  `json:"runs"`
}

// Run is one run of one query: from sending it until the last byte of its
// result was read.
type Run struct {
	Millis float64 `json:"millis"`
	// Rows the result had (lines of ClickHouse's TabSeparated output).
	Rows int64 `json:"rows"`
	// QueryID is the server's identifier of the run, when the protocol has
	// one (ClickHouse's query_id, as system.query_log records it).
	QueryID string `json:"queryId,omitempty"`
	// Error is the server's or the client's message of a failed run.
	Error string `json:"error,omitempty"`
}

// Failed says whether the run failed.
func (r Run) Failed() bool { return r.Error != "" }

// Encode renders the report as indented JSON.
func (r *Report) Encode() ([]byte, error) {
	return json.MarshalIndent(r, "", "  ")
}
