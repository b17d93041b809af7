// Package comparison holds the BenchmarkComparison reconciler: it runs the
// variants of a comparison as BenchmarkRuns in the order asked (interleaved,
// sequential or concurrent), compares each candidate with the baseline
// (internal/compare) and writes the verdicts to status and the report
// ConfigMap. Its runs' names are deterministic (RunName), so a restart
// never starts a run twice; a run of that name it does not own is refused.
package comparison
