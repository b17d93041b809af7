package results

import "math"

// MillisToMicros turns a latency in milliseconds into the microseconds a
// latency histogram records, within its range.
func MillisToMicros(ms float64) int64 { return clampMicros(int64(math.Round(ms * 1000))) }
