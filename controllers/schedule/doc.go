// Package schedule holds the BenchmarkSchedule reconciler: it triggers a
// run or a comparison from its template on a cron or when the template
// changes (TemplateHash), keeps the history of what they measured, judges
// it for regressions and improvements (internal/stats) and announces each
// transition exactly once, with events it creates under deterministic
// names.
package schedule
