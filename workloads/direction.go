package workloads

import (
	"strings"
	"unicode"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// DirectionOfShare tells which way a rate or a count of a tool's own
// (a k6 Rate, a custom tool's successPercent) improves, where its name
// says so unambiguously: one that names failures or errors is
// LowerIsBetter, one that names successes, ok or passes HigherIsBetter —
// a rate of successes is never Neutral. ok is false when the name says
// neither, or both.
func DirectionOfShare(name string) (dir results.Direction, ok bool) {
	bad, good := false, false
	for _, w := range Words(name) {
		switch {
		case strings.HasPrefix(w, "fail"), strings.HasPrefix(w, "error"), w == "err", w == "errs":
			bad = true
		case strings.HasPrefix(w, "succe"), w == "ok", strings.HasPrefix(w, "pass"):
			good = true
		}
	}
	switch {
	case bad && !good:
		return results.LowerIsBetter, true
	case good && !bad:
		return results.HigherIsBetter, true
	}
	return results.Neutral, false
}

// Words splits snake_case, kebab-case and camelCase into lower-case words.
func Words(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, c := range name {
		switch {
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			flush()
		case unicode.IsUpper(c) && prevLower: // camelCase; OK stays one word
			flush()
			cur = append(cur, c)
		default:
			cur = append(cur, c)
		}
		prevLower = unicode.IsLower(c)
	}
	flush()
	return out
}
