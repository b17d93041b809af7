// Package targets brings up (or checks) the database under test of a
// BenchmarkRun and says how load generators reach it: one provisioner per
// target kind, each idempotent, each owning what it creates through the run.
package targets
