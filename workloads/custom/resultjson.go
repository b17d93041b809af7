package custom

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// resultJSON reads dbperf's own result document (results.Result), whose
// schemaVersion must be the one this runner writes. In the output, the
// document is the rest of it from the first line that begins with {.
func (c *collector) resultJSON() {
	data, first := c.src.data, 1
	if !c.src.file {
		i := jsonStart(data)
		if i < 0 {
			c.r.Fail("no result document in the %s of %s: it begins with a line starting with {", c.src.name, c.cfg.Tool)
			return
		}
		first += bytes.Count(data[:i], []byte("\n"))
		data = data[i:]
	}
	var doc results.Result
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		c.r.Fail("%s: the result document is unreadable: %s", c.src.name, jsonError(err, data, first))
		return
	}
	after := data[dec.InputOffset():]
	if rest := bytes.TrimLeft(after, " \t\r\n"); len(rest) > 0 {
		at := len(data) - len(rest)
		c.invalid("%s: text after the result document: %s", c.line(first+bytes.Count(data[:at], []byte("\n"))), quoteLine(firstLine(rest)))
	}
	if doc.SchemaVersion != results.SchemaVersion {
		c.r.Fail("%s, schemaVersion: %d; this dbperf-runner reads schemaVersion %d", c.src.name, doc.SchemaVersion, results.SchemaVersion)
		return
	}
	c.document(&doc)
}

// document takes what a tool may say of its measurement from its result
// document; the runner's own fields (exit code, times, load generator,
// telemetry series) are the runner's to fill.
func (c *collector) document(doc *results.Result) {
	r := c.r
	tool := c.cfg.Tool
	if doc.Tool != "" {
		r.SetParam("tool", doc.Tool)
		tool = doc.Tool
	}
	r.ToolVersion = doc.ToolVersion
	for _, k := range workloads.SortedKeys(doc.Parameters) {
		r.SetParam(k, doc.Parameters[k])
	}
	switch doc.Verdict {
	case "", results.Succeeded:
	case results.Failed, results.Invalid:
		if len(doc.Reasons) == 0 {
			doc.Reasons = []string{"no reason given"}
		}
		for _, reason := range doc.Reasons {
			if doc.Verdict == results.Failed {
				r.Fail("%s says: %s", tool, reason)
			} else {
				r.Invalidate("%s says: %s", tool, reason)
			}
		}
	default:
		c.invalid("%s, verdict: %q is not Succeeded, Invalid or Failed", c.src.name, clip(string(doc.Verdict)))
	}
	r.Warnings = append(r.Warnings, doc.Warnings...)
	if doc.Primary.Name != "" && doc.Primary != c.cfg.Primary {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: the document's primary metric %s is not spec.workload.custom.primaryMetric %s, which counts", c.src.name, doc.Primary, c.cfg.Primary))
	}
	var ignored []string
	if doc.ExitCode != nil || doc.StartTime != nil || doc.EndTime != nil {
		ignored = append(ignored, "exitCode, startTime, endTime")
	}
	if doc.LoadGenerator != nil {
		ignored = append(ignored, "loadGenerator")
	}
	if len(doc.Series) > 0 {
		ignored = append(ignored, "series")
	}
	if len(ignored) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %s are the runner's to measure: the document's are ignored", c.src.name, strings.Join(ignored, ", ")))
	}
	for i, m := range doc.Metrics {
		at := fmt.Sprintf("%s metrics[%d]", c.src.name, i)
		if !metricName.MatchString(m.Name) {
			c.invalid("%s.name: %q is not a metric name", at, clip(m.Name))
			continue
		}
		if !finite(m.Value) {
			c.invalid("%s.value: %v is not a number", at, m.Value)
			continue
		}
		switch m.Direction {
		case "", results.HigherIsBetter, results.LowerIsBetter, results.Neutral:
		default:
			c.invalid("%s.direction: %q is not HigherIsBetter, LowerIsBetter or Neutral", at, clip(string(m.Direction)))
			m.Direction = ""
		}
		if m.Source != "" {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s.source: telemetry is the runner's and the operator's to record: %s is kept as the tool's own", at, m.Key()))
			m.Source = ""
		}
		c.add(at, at+".unit", at+".direction", m)
	}
	for _, op := range workloads.SortedKeys(doc.Histograms) {
		at := fmt.Sprintf("%s histograms[%q]", c.src.name, op)
		h, err := results.DecodeHistogram(doc.Histograms[op])
		if err != nil {
			c.invalid("%s: not a histogram as results.Result holds them: %v", at, err)
			continue
		}
		c.histogram(at, op, h)
	}
	for i, p := range doc.TimeSeries {
		if p.ElapsedSeconds < 0 {
			c.invalid("%s timeSeries[%d].t: %v is before the start", c.src.name, i, p.ElapsedSeconds)
			continue
		}
		for k, v := range p.Values {
			c.point(p.ElapsedSeconds, k, v)
		}
	}
}

// jsonStart is the offset of the first line that begins with {, in its
// first column: the lines inside an indented document do not.
func jsonStart(data []byte) int {
	for off := 0; off < len(data); {
		if data[off] == '{' {
			return off
		}
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	return -1
}

// jsonError names the line of a syntax or type error.
func jsonError(err error, data []byte, first int) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var off int64 = -1
	switch {
	case errors.As(err, &syntax):
		off = syntax.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return err.Error()
	}
	return fmt.Sprintf("line %d: %v", first+bytes.Count(data[:off], []byte("\n")), err)
}

func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
