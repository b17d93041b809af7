package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// MaxNameLength keeps child names usable as label values and DNS labels.
const MaxNameLength = 63

// ChildName is the deterministic name of a run's child: "<run>-<suffix>",
// or, when that is too long, a prefix of the run's name, a short hash of the
// run's name and UID, and the suffix.
func ChildName(run *benchv1.BenchmarkRun, suffix string) string {
	full := run.Name + "-" + suffix
	if len(full) <= MaxNameLength {
		return full
	}
	sum := sha256.Sum256([]byte(run.Name + "/" + string(run.UID)))
	hash := hex.EncodeToString(sum[:])[:8]
	keep := MaxNameLength - len(suffix) - len(hash) - 2
	prefix := run.Name
	if keep < len(prefix) {
		prefix = prefix[:max(keep, 0)]
	}
	for len(prefix) > 0 && (prefix[len(prefix)-1] == '-' || prefix[len(prefix)-1] == '.') {
		prefix = prefix[:len(prefix)-1]
	}
	return fmt.Sprintf("%s-%s-%s", prefix, hash, suffix)
}

// Names of a run's children.
func PrepareJobName(run *benchv1.BenchmarkRun) string { return ChildName(run, "prepare") }

// MeasureJobName names the Job of one step (counted from 0) and repetition (from 1).
func MeasureJobName(run *benchv1.BenchmarkRun, step int, rep int32) string {
	return ChildName(run, fmt.Sprintf("s%d-r%d", step, rep))
}
func FilesConfigMapName(run *benchv1.BenchmarkRun) string { return ChildName(run, "files") }
func ResultsConfigMapName(run *benchv1.BenchmarkRun) string {
	return ChildName(run, "results")
}
func PostgresClusterName(run *benchv1.BenchmarkRun) string { return ChildName(run, "pg") }
func ValkeyName(run *benchv1.BenchmarkRun) string          { return ChildName(run, "valkey") }
