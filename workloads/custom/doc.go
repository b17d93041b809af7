// Package custom runs a load tool dbperf does not ship ("bring your own
// tool"): the user's command, in the user's image, with the target in
// DBPERF_TARGET_* variables and a sweep of named integer parameters
// substituted for {{name}} placeholders. The tool prints its results in a
// versioned format (dbperf's Result JSON, dbperf-lines v1 or OpenMetrics
// text) that the parser validates line by line against the spec's
// primary metric and declarations, which reach it through the
// invocation's parser configuration. docs/workloads/custom.md is the
// user's side of it.
package custom
