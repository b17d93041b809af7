package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// Limits of child names, by what else the name must be.
const (
	// MaxNameLength keeps child names usable as label values and DNS labels:
	// a Job's name is its pods' job-name label, a Service's name a DNS-1035
	// label.
	MaxNameLength = 63
	// MaxServerNameLength is the limit of a StatefulSet's name: its pods
	// carry "<name>-<revision hash>" (up to 11 more characters) in the
	// controller-revision-hash label, which must fit in 63.
	MaxServerNameLength = 52
	// MaxObjectNameLength is the limit of a DNS-1123 subdomain: the names of
	// runs, comparisons and ConfigMaps.
	MaxObjectNameLength = 253

	hashLength = 8
)

// Name is the one way the operator names a child: "<base>-<suffix>" when
// that fits within limit (readable, and what such names have always been),
// else as much of base as fits, a short hash and the suffix. The hash covers
// base, the owner's UID and suffix, so that bases which differ only after
// the cut, or owners of one name that follow each other, never share a child
// name: a shared name would make one owner adopt, skip or overwrite the
// other's child. suffix must not be empty.
func Name(base, suffix string, uid types.UID, limit int) string {
	full := base + "-" + suffix
	if len(full) <= limit {
		return full
	}
	sum := sha256.Sum256([]byte(base + "\x00" + string(uid) + "\x00" + suffix))
	hash := hex.EncodeToString(sum[:])[:hashLength]
	keep := limit - len(hash) - len(suffix) - 2
	if keep < 1 { // a suffix too long to keep whole: the hash ends the name
		return trimEnd(full[:limit-len(hash)-1]) + "-" + hash
	}
	return trimEnd(base[:min(keep, len(base))]) + "-" + hash + "-" + suffix
}

// trimEnd drops what a cut may leave at the end and a name may not end with.
func trimEnd(s string) string { return strings.TrimRight(s, "-.") }

// ChildName is the deterministic name of a run's child: "<run>-<suffix>",
// hashed as Name does when that is longer than a label value may be.
func ChildName(run *benchv1.BenchmarkRun, suffix string) string {
	return Name(run.Name, suffix, run.UID, MaxNameLength)
}

// ServerName names a provisioned server's StatefulSet and Service.
func ServerName(run *benchv1.BenchmarkRun, kind string) string {
	return Name(run.Name, kind, run.UID, MaxServerNameLength)
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
