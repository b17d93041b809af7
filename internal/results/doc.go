// Package results is the normalized result model shared by the runner, the
// operator, the CLI and the comparison engine: metrics with units and the
// direction in which they improve, a verdict with reasons, the compact summary
// that fits a container's termination message, the compressed block the
// runner appends to its log, and summaries over repetitions.
package results
