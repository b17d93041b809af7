package custom

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// The line format: a header naming its version, then one record per line.
const (
	linesMagic   = "# dbperf-lines"
	linesVersion = "v1"
	// LinesHeader begins the results in the line format.
	LinesHeader = linesMagic + " " + linesVersion
)

// lines reads dbperf-lines v1. In the output, what comes before the header
// is the tool's log; a result file begins with the header.
func (c *collector) lines() {
	all := workloads.Lines(c.src.data)
	start := -1
	for i, l := range all {
		t := strings.TrimSpace(l)
		if c.src.file && t != "" && !strings.HasPrefix(t, linesMagic+" ") {
			c.r.Fail("%s does not begin with the line %q (its first line is %s)", c.src.name, LinesHeader, quoteLine(t))
			return
		}
		if v, ok := strings.CutPrefix(t, linesMagic+" "); ok {
			if v = strings.TrimSpace(v); v != linesVersion {
				c.r.Fail("%s: %s: this dbperf-runner reads dbperf-lines %s", c.line(i+1), quoteLine(t), linesVersion)
				return
			}
			start = i
			break
		}
	}
	if start < 0 {
		c.r.Fail("no line %q in the %s of %s: the results in the line format begin with it", LinesHeader, c.src.name, c.cfg.Tool)
		return
	}
	for i := start + 1; i < len(all); i++ {
		t := strings.TrimSpace(all[i])
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, linesMagic+" ") {
			c.invalid("%s: a second header %s: the results were printed twice, or two tools share the output", c.line(i+1), quoteLine(t))
			continue
		}
		if strings.HasPrefix(t, "#") {
			continue
		}
		c.record(c.line(i+1), t)
	}
}

// record reads one record; loc names its line.
func (c *collector) record(loc, line string) {
	f := strings.Fields(line)
	want := map[string]string{
		"metric":    "metric NAME OPERATION VALUE UNIT DIRECTION",
		"histogram": "histogram OPERATION us BASE64",
		"progress":  "progress SECONDS NAME VALUE",
		"param":     "param NAME VALUE",
		"tool":      "tool NAME [VERSION]",
		"invalid":   "invalid REASON",
		"failed":    "failed REASON",
	}
	form, known := want[f[0]]
	switch {
	case !known:
		c.invalid("%s, field 1 (kind): %q is not a record of dbperf-lines v1 (metric, histogram, progress, param, tool, invalid, failed; # for a comment)", loc, clip(f[0]))
		return
	case !fieldCountOK(f, form):
		c.invalid("%s: %d fields, want %q", loc, len(f), form)
		return
	}
	switch f[0] {
	case "metric":
		c.metricRecord(loc, f)
	case "histogram":
		c.histogramRecord(loc, f)
	case "progress":
		c.progressRecord(loc, f)
	case "param":
		if f[1] == "tool" || f[1] == "loadGenerators" {
			// dbperf's own parameters: a merge of generators sets them.
			c.invalid("%s, field 2 (name): %q is a parameter of dbperf's own; name it otherwise", loc, f[1])
			return
		}
		c.r.SetParam(f[1], strings.Join(f[2:], " "))
	case "tool":
		c.r.SetParam("tool", f[1])
		if len(f) == 3 {
			c.r.ToolVersion = f[2]
		}
	case "invalid":
		c.r.Invalidate("%s says (%s): %s", c.cfg.Tool, loc, strings.Join(f[1:], " "))
	case "failed":
		c.r.Fail("%s says (%s): %s", c.cfg.Tool, loc, strings.Join(f[1:], " "))
	}
}

// fieldCountOK checks a record's field count against its form: a
// bracketed field is optional, a trailing REASON or VALUE takes the rest.
func fieldCountOK(f []string, form string) bool {
	parts := strings.Fields(form)
	last := parts[len(parts)-1]
	switch {
	case last == "REASON" || (last == "VALUE" && f[0] == "param"):
		return len(f) >= len(parts)
	case strings.HasPrefix(last, "["):
		return len(f) == len(parts) || len(f) == len(parts)-1
	}
	return len(f) == len(parts)
}

func (c *collector) metricRecord(loc string, f []string) {
	m := results.Metric{Name: f[1], Operation: dash(f[2]), Unit: dash(f[4])}
	if !metricName.MatchString(m.Name) {
		c.invalid("%s, field 2 (name): %q is not a metric name (a letter, _ or :, then letters, digits, _, : or .)", loc, clip(m.Name))
		return
	}
	v, err := strconv.ParseFloat(f[3], 64)
	if err != nil || !finite(v) {
		c.invalid("%s, field 4 (value): %q is not a number", loc, clip(f[3]))
		return
	}
	m.Value = v
	switch d := results.Direction(f[5]); d {
	case "-":
	case results.HigherIsBetter, results.LowerIsBetter, results.Neutral:
		m.Direction = d
	default:
		c.invalid("%s, field 6 (direction): %q is not HigherIsBetter, LowerIsBetter, Neutral or -", loc, clip(f[5]))
	}
	c.add(loc, "field 5 (unit)", "field 6 (direction)", m)
}

func (c *collector) histogramRecord(loc string, f []string) {
	if f[2] != "us" {
		c.invalid("%s, field 3 (unit): histograms are of microseconds, written us, not %q", loc, clip(f[2]))
		return
	}
	h, err := decodeHistogram(f[3])
	if err != nil {
		c.invalid("%s, field 4 (histogram): not an HdrHistogram in its compressed encoding in base64 (HISTFAAA…): %v", loc, err)
		return
	}
	c.histogram(loc, dash(f[1]), h)
}

// decodeHistogram reads a histogram as HdrHistogram's logs hold it: its
// compressed encoding (V2, or the Java library's V1) in base64,
// "HISTFAAA…", which hdrhistogram-go's Encode returns.
func decodeHistogram(s string) (*hdr.Histogram, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	return results.DecodeJavaHistogram(raw)
}

func (c *collector) progressRecord(loc string, f []string) {
	t, err := strconv.ParseFloat(f[1], 64)
	if err != nil || !finite(t) || t < 0 {
		c.invalid("%s, field 2 (seconds): %q is not a time in seconds from the start", loc, clip(f[1]))
		return
	}
	if !metricName.MatchString(f[2]) {
		c.invalid("%s, field 3 (name): %q is not a metric name", loc, clip(f[2]))
		return
	}
	v, err := strconv.ParseFloat(f[3], 64)
	if err != nil || !finite(v) {
		c.invalid("%s, field 4 (value): %q is not a number", loc, clip(f[3]))
		return
	}
	c.point(t, f[2], v)
}

// dash reads "-" as nothing.
func dash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// clip keeps a quoted piece of a malformed line short.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func quoteLine(s string) string { return fmt.Sprintf("%q", clip(s)) }
