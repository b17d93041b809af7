// Package query times SQL queries one by one, as analytical benchmarks do
// (the Star Schema Benchmark's 13 queries, ClickBench's queries.sql): each
// query runs runsPerQuery times in a row on one connection, the first run
// reported apart from the others (cold versus hot). The client is built
// into dbperf-runner (`dbperf-runner query`, its engine in
// internal/runner/queryengine; this package only describes it and links no
// database client): ClickHouse's HTTP interface, PostgreSQL's and MySQL's
// wire protocols. It writes a Report, which Parse
// turns into a Result whose operations are the queries and whose headline
// is the geometric mean of their hot times. The prepare step runs SQL
// scripts, loads CSV or TSV files (from a URL or a claim) and may run a
// generator command. docs/workloads/query-bench.md is the user's side of it.
package query
