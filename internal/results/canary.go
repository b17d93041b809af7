package results

// A canary is a short fixed micro-measurement of a load generator's node
// the runner makes before the tool starts (BenchmarkRun spec.canary): the
// same work on every node, so that its figures say how fast the node was
// at that moment — a slower disk, a busier host — apart from the
// workload. Its figures are metrics of SourceCanary, taken from the first
// load generator, described in a comparison and never judged; a
// comparison may adjust its headline by one of them (a CUPED covariate,
// docs/statistics.md).
const SourceCanary = "canary"

// The canary's figures.
const (
	// CanaryCPUMegabytesPerSecond is SHA-256 over a fixed 64 KiB buffer by
	// one worker per CPU the container may use, summed, for half the
	// canary's time: what the node's CPUs give, including what other
	// tenants take from them.
	CanaryCPUMegabytesPerSecond = "canaryCPUMegabytesPerSecond"
	// CanaryDiskWriteMegabytesPerSecond is 1 MiB writes to a new file in
	// the pod's scratch directory for a quarter of the canary's time,
	// flushed to the device (fsync) at the end.
	CanaryDiskWriteMegabytesPerSecond = "canaryDiskWriteMegabytesPerSecond"
	// CanaryDiskSyncMillis is the median time of a 4 KiB write and its
	// fsync, for the last quarter: a commit's cost on that disk.
	CanaryDiskSyncMillis = "canaryDiskSyncMillis"
)
