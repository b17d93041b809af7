package status

import (
	"math"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MaxEventMessage bounds an event's message, as a condition's.
const MaxEventMessage = 1024

// Truncate shortens s to at most n bytes, at a rune boundary (a tool's
// output quoted in a message may hold any UTF-8), saying so with "...".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}

// Round rounds v to decimals places; a value that would overflow stays.
func Round(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	if math.IsInf(v*p, 0) {
		return v
	}
	return math.Round(v*p) / p
}

// Finite is v rounded to 4 places, or nil for NaN and the infinities,
// which status cannot hold.
func Finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	x := Round(v, 4)
	return &x
}

// Event is an event to emit once the status that records its transition
// is stored: never for a write that was refused, so never twice.
type Event struct {
	Type, Reason, Message string
}

// Emit says the event of obj, its message bounded.
func (e Event) Emit(rec record.EventRecorder, obj runtime.Object) {
	rec.Event(obj, e.Type, e.Reason, Truncate(e.Message, MaxEventMessage))
}

// CreatedBefore orders objects by creation, then namespace and name: the
// order of a queue and of a history.
func CreatedBefore(a, b client.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	if na, nb := a.GetNamespace(), b.GetNamespace(); na != nb {
		return na < nb
	}
	return a.GetName() < b.GetName()
}
