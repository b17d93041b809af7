package workloads

import (
	"bytes"
	"strconv"
	"strings"
)

// Lines splits output into lines without their line endings, dropping a
// UTF-8 byte order mark and treating carriage returns (progress bars) as line
// breaks.
func Lines(out []byte) []string {
	out = bytes.TrimPrefix(out, []byte("\xef\xbb\xbf"))
	s := strings.ReplaceAll(string(out), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Split(s, "\n")
}

// Float parses a number that may carry thousands separators or a unit suffix
// like "ms"; ok is false for "---", "-nan" and other non-numbers.
func Float(s string) (float64, bool) {
	s = strings.TrimSpace(strings.ReplaceAll(s, ",", ""))
	s = strings.TrimSuffix(s, "ms")
	s = strings.TrimSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v != v {
		return 0, false
	}
	return v, true
}
