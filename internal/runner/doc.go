// Package runner is the inside of `dbperf-runner exec`: it starts the load
// tool, streams its output (with secrets redacted) while keeping a copy,
// samples the container's CPU from its cgroup, parses the output into a
// results.Result, applies the validity thresholds, and leaves the compact
// summary in the termination message and the full result at the end of the log.
package runner
