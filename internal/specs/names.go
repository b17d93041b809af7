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
	// MaxClusterNameLength is CloudNativePG's limit of a Cluster's name (its
	// webhook refuses longer ones): it names the Cluster's pods, Services
	// and Jobs after it.
	MaxClusterNameLength = 50
	// MaxIndexedJobNameLength is the limit of the name of a Job of several
	// load generators (an Indexed Job): its pods' hostnames are
	// "<job>-<index>", DNS-1123 labels, and the index goes up to 63.
	MaxIndexedJobNameLength = MaxNameLength - len("-63")

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
	if full := base + "-" + suffix; len(full) <= limit {
		return full
	}
	return hashedName(base, base, suffix, uid, limit)
}

// LabelName is Name for a child whose name must be a DNS-1035 label (a
// Service, and the StatefulSets and CloudNativePG Clusters that name their
// Services and pods after themselves). A run's name is a DNS-1123
// subdomain, which may hold dots and begin with a digit: the dots become
// dashes, and a name that would not begin with a letter begins with "r".
// When that changes the base, the name is hashed as a cut one is, so that
// runs "a.b" and "a-b" never share a child.
func LabelName(base, suffix string, uid types.UID, limit int) string {
	return labelName(base, suffix, uid, limit, true)
}

// labelName is LabelName, for a DNS-1123 label (which may begin with a
// digit) unless letterFirst.
func labelName(base, suffix string, uid types.UID, limit int, letterFirst bool) string {
	label := strings.ReplaceAll(base, ".", "-")
	if letterFirst && (label == "" || label[0] < 'a' || label[0] > 'z') {
		label = "r" + label
	}
	if label == base {
		return Name(base, suffix, uid, limit)
	}
	return hashedName(label, base, suffix, uid, limit)
}

// hashedName is as much of keep as fits, a hash of base, the owner's UID
// and suffix, and the suffix.
func hashedName(keep, base, suffix string, uid types.UID, limit int) string {
	sum := sha256.Sum256([]byte(base + "\x00" + string(uid) + "\x00" + suffix))
	hash := hex.EncodeToString(sum[:])[:hashLength]
	room := limit - len(hash) - len(suffix) - 2
	if room < 1 { // a suffix too long to keep whole: the hash ends the name
		full := keep + "-" + suffix
		return trimEnd(full[:limit-len(hash)-1]) + "-" + hash
	}
	return trimEnd(keep[:min(room, len(keep))]) + "-" + hash + "-" + suffix
}

// trimEnd drops what a cut may leave at the end and a name may not end with.
func trimEnd(s string) string { return strings.TrimRight(s, "-.") }

// ChildName is the deterministic name of a run's child: "<run>-<suffix>",
// hashed as Name does when that is longer than a label value may be.
func ChildName(run *benchv1.BenchmarkRun, suffix string) string {
	return Name(run.Name, suffix, run.UID, MaxNameLength)
}

// ServerName names a provisioned server's StatefulSet and Service: a
// DNS-1035 label short enough for the StatefulSet's pods' labels.
func ServerName(run *benchv1.BenchmarkRun, kind string) string {
	return LabelName(run.Name, kind, run.UID, MaxServerNameLength)
}

// Names of a run's children.
func PrepareJobName(run *benchv1.BenchmarkRun) string { return ChildName(run, "prepare") }

// MeasureJobName names the Job of one step (counted from 0) and repetition (from 1).
// A Job of several load generators is Indexed: its name is a DNS-1123
// label with room for the index.
func MeasureJobName(run *benchv1.BenchmarkRun, step int, rep int32) string {
	suffix := fmt.Sprintf("s%d-r%d", step, rep)
	if run.Spec.Workload.Parallelism > 1 || run.Spec.Disturbances != nil { // an Indexed Job (start barrier)
		return labelName(run.Name, suffix, run.UID, MaxIndexedJobNameLength, false)
	}
	return ChildName(run, suffix)
}
func FilesConfigMapName(run *benchv1.BenchmarkRun) string { return ChildName(run, "files") }
func ResultsConfigMapName(run *benchv1.BenchmarkRun) string {
	return ChildName(run, "results")
}
