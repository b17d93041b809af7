// Package ycsb is the YCSB workload (Yahoo! Cloud Serving Benchmark): core
// workloads A–F or custom property sets, a load step (the prepare step) and
// a run step per thread count, and the parser of YCSB's text report —
// [OVERALL] runtime and throughput, per operation (READ, UPDATE, INSERT,
// READ-MODIFY-WRITE, SCAN, …) count, average/min/max and percentile
// latencies, Return=OK/ERROR/NOT_FOUND counts — and of its `-s` status
// lines as a time series.
package ycsb
