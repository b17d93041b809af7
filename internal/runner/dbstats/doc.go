// Package dbstats polls a database server's own statistics during a
// measurement window (pg_stat_database, pg_stat_activity, pg_stat_wal and
// the checkpoints' view, SHOW GLOBAL STATUS, INFO, serverStatus) and
// summarises them as telemetry: counters as rates over the window, gauges
// as mean and max. It is the only view of an external or managed endpoint,
// where no pod or node of the server can be seen. It runs inside the load generator's pod, in dbperf-runner; the
// operator only names the protocol of the server (pod.Statistics), and a
// poller is chosen by it (Open).
//
// A Poller reads one database with one short statement per poll; a
// Recording polls it at an interval from a window's start to its stop and
// Summarize turns the readings into a telemetry.Report. Credentials reach
// the pollers in their Config and never appear in an error.
package dbstats
