package runner

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// What a failed tool said last goes where a user looks first: a reason of
// the result (the run's conditions, events and status.message quote it),
// and the end of its output in the results document. A wrong password, a
// missing database or an unreachable host is then named in the tool's own
// words, redacted like everything the runner prints.

const (
	// tailBytes is how much of the end of the output is kept for it.
	tailBytes = 32 << 10
	// saidLines is how many lines the reason quotes; tailLines how many the
	// results document keeps; lineBytes bounds each.
	saidLines = 3
	tailLines = 20
	lineBytes = 240
)

// strong and weak words of an error, as tools write them (libpq's FATAL,
// redis' WRONGPASS, Java exceptions, k6's level=error), whole words only,
// looked for in a line without its paths (a namespace "perf-failures" in a
// path is no failure). A line with a strong word says what failed; one with
// only a weak word ("report latency for each error is false") may be an
// echo of settings, and is quoted only when no line has a strong one.
var (
	strong = regexp.MustCompile(`(?i)\b(fatal|fail(ed|s|ure)?|denied|refused|does ?n[o']t exist|not allowed|exception|authenticat\w*|wrongpass|noauth|unreachable|no route|timed? ?out|panic|abort(ed)?|forbidden|unauthori[sz]ed|could ?n[o']t connect|cannot connect|level=error)\b`)
	weak   = regexp.MustCompile(`(?i)\b(errors?|unknown|invalid|not found|no such|could ?n[o']t|cannot|can't|unable)\b`)
)

// paths are the path-like words of a line.
var paths = regexp.MustCompile(`\S*/\S*`)

// warning is a line a tool prints at warning level: not what failed.
var warning = regexp.MustCompile(`^(WARNING|WARN|Warning)\b|level=warn`)

// errorWords says how a line reads: 2 with a strong word of an error, 1
// with a weak one, 0 with none or at warning level.
func errorWords(l string) int {
	if warning.MatchString(l) {
		return 0
	}
	l = paths.ReplaceAllString(l, " ")
	switch {
	case strong.MatchString(l):
		return 2
	case weak.MatchString(l):
		return 1
	}
	return 0
}

// readsAsError says whether a line reads as an error at all.
func readsAsError(l string) bool { return errorWords(l) > 0 }

// noise are lines that say nothing of their own: a Java stack frame, its
// elision, a progress bar's leftovers, a metric line (YCSB's "[INSERT-
// FAILED], Count, 10" names an operation, not an error), a tool's echo of
// its command line.
var noise = regexp.MustCompile(`^(\s+at\s|\s*\.\.\.\s*\d+\s+more|\s*Caused by:\s*$|[\s=\-*#.]*$|\[[A-Za-z0-9_%.-]+\], |Command line: )`)

// digits collapse to one form, so that the same error about another key,
// connection or port counts once.
var digits = regexp.MustCompile(`[0-9]+`)

// lines are tail's lines worth reading, oldest first: not empty, not the
// runner's own, not noise; redacted and shortened.
func lines(tail []byte, red *Redactor) []string {
	var out []string
	for _, raw := range bytes.Split(bytes.ReplaceAll(tail, []byte("\r"), []byte("\n")), []byte("\n")) {
		l := strings.TrimSpace(red.String(string(raw)))
		if l == "" || strings.HasPrefix(l, "[dbperf-runner]") || strings.HasPrefix(l, "----- ") || noise.MatchString(string(raw)) {
			continue
		}
		out = append(out, shorten(l, lineBytes))
	}
	return out
}

// said picks what the tool said of its failure from its lines: the lines
// that read most strongly as errors, each distinct one once, the first (the
// cause, as a rule: what follows is its consequences) and the last
// saidLines-1; or, when none reads as an error, its last saidLines lines.
func said(all []string) []string {
	best := 0
	for _, l := range all {
		best = max(best, errorWords(l))
	}
	if best == 0 {
		return all[max(0, len(all)-saidLines):]
	}
	var errs []string
	seen := map[string]bool{}
	for _, l := range all {
		key := digits.ReplaceAllString(l, "#")
		if errorWords(l) == best && !seen[key] {
			seen[key] = true
			errs = append(errs, l)
		}
	}
	if len(errs) <= saidLines {
		return errs
	}
	return append(errs[:1:1], errs[len(errs)-saidLines+1:]...)
}

// sayLastWords adds to a failed result what the tool said last: a first
// reason quoting it (said) but for what a reason quotes already (its parser
// read the error), and the end of its output.
func sayLastWords(r *results.Result, tail []byte, red *Redactor) {
	if r.Verdict != results.Failed || len(tail) == 0 {
		return
	}
	all := lines(tail, red)
	if len(all) == 0 {
		return
	}
	r.OutputTail = all[max(0, len(all)-tailLines):]
	var fresh []string
	for _, l := range said(all) {
		if !quoted(r.Reasons, l) {
			fresh = append(fresh, l)
		}
	}
	if len(fresh) == 0 {
		return // its parser quoted it already
	}
	// First: the tool's own words are what a user reads first.
	r.Reasons = append([]string{"the tool said: " + strings.Join(fresh, " | ")}, r.Reasons...)
}

// quoted says whether a reason already carries line, or the line past its
// first "who: " (a parser that quotes "X stopped: what" of a line "X: what").
func quoted(reasons []string, line string) bool {
	rest := ""
	if i := strings.Index(line, ": "); i > 0 && len(line)-i-2 >= 20 {
		rest = line[i+2:]
	}
	for _, r := range reasons {
		if strings.Contains(r, line) || (rest != "" && strings.Contains(r, rest)) {
			return true
		}
	}
	return false
}

// shorten cuts s to n bytes at a rune boundary.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
