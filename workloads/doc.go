// Package workloads defines the small interface every load tool implements
// (validate its spec, list the steps of its sweep, build the prepare and run
// invocations, parse its output into a results.Result) and the types those
// functions share. Each tool lives in its own sub-package; the registry
// sub-package is the one place that lists them.
package workloads
