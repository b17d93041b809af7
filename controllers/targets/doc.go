// Package targets brings up (or checks) the database under test of a
// BenchmarkRun and says how load generators reach it: one provisioner per
// target kind, each idempotent, each owning what it creates through the run.
//
// The kinds are listed once, in registry.go; each kind's code is in its own
// file (<kind>.go here, target_<kind>.go in internal/specs), and the
// StatefulSet servers share serverTarget. What a workload needs of its
// target beyond a client's credentials arrives as Needs, so no code here
// names a tool (test/arch checks it).
package targets
