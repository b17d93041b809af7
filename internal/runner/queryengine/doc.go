// Package queryengine is `dbperf-runner query`'s engine, inside the query
// workload's pod: it connects to the target (ClickHouse's HTTP interface,
// PostgreSQL's and MySQL's wire protocols, with the pod's one TLSClient),
// times each query of a queries file (Measure) into the Report
// workloads/query parses, and runs the prepare step's scripts and loads
// (Prepare). It is the runner's side of the workload: the operator, which
// links workloads/query, never links this package nor its drivers.
package queryengine
