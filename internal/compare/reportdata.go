package compare

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Keys of a comparison's report ConfigMap: plain when the report is small,
// gzip in binaryData when it is large (every operation of every step).
const (
	ReportJSONKey     = "report.json"
	ReportMarkdownKey = "report.md"
	ReportHTMLKey     = "report.html"
	gzSuffix          = ".gz"
	// reportPlainLimit: above this many bytes the three renderings are
	// stored gzipped; reportMaxBytes is what a ConfigMap can hold with
	// room for its metadata.
	reportPlainLimit = 256 << 10
	reportMaxBytes   = 1000 << 10
)

// ReportData renders reports into a ConfigMap's data: JSON, Markdown and
// HTML, gzipped when large; when even that does not fit, the HTML and then
// the Markdown are left out (the JSON, from which both can be rendered
// again by `kubectl dbperf compare COMPARISON -o html`, always stays) and
// the note says so.
func ReportData(reports []*Report) (data map[string]string, binary map[string][]byte, note string, err error) {
	var js, md, html bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	if err := enc.Encode(reports); err != nil {
		return nil, nil, "", err
	}
	for _, rep := range reports {
		if err := Render(&md, rep, "markdown"); err != nil {
			return nil, nil, "", err
		}
		md.WriteString("\n")
	}
	if err := RenderHTML(&html, reports); err != nil {
		return nil, nil, "", err
	}
	parts := map[string][]byte{ReportJSONKey: js.Bytes(), ReportMarkdownKey: md.Bytes(), ReportHTMLKey: html.Bytes()}
	if js.Len()+md.Len()+html.Len() < reportPlainLimit {
		data = map[string]string{}
		for k, v := range parts {
			data[k] = string(v)
		}
		return data, nil, "", nil
	}
	binary = map[string][]byte{}
	total := 0
	for _, k := range []string{ReportJSONKey, ReportMarkdownKey, ReportHTMLKey} {
		binary[k+gzSuffix] = results.Gzip(parts[k])
		total += len(binary[k+gzSuffix])
	}
	for _, k := range []string{ReportHTMLKey, ReportMarkdownKey} {
		if total < reportMaxBytes {
			break
		}
		total -= len(binary[k+gzSuffix])
		delete(binary, k+gzSuffix)
		note += fmt.Sprintf("%s left out: the report is too large for a ConfigMap; render it with `kubectl dbperf compare COMPARISON -o html`. ", k)
	}
	if total >= reportMaxBytes {
		return nil, nil, "", fmt.Errorf("the report's JSON is %d bytes gzipped, too large for a ConfigMap", total)
	}
	return nil, binary, note, nil
}

// ReadReports reads the reports of a report ConfigMap's data, plain or
// gzipped.
func ReadReports(data map[string]string, binary map[string][]byte) ([]*Report, error) {
	raw := []byte(data[ReportJSONKey])
	if len(raw) == 0 {
		if z, ok := binary[ReportJSONKey+gzSuffix]; ok {
			var err error
			if raw, err = results.Gunzip(z); err != nil {
				return nil, fmt.Errorf("%s%s: %w", ReportJSONKey, gzSuffix, err)
			}
		}
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("no %s in the report", ReportJSONKey)
	}
	var reports []*Report
	if err := json.Unmarshal(raw, &reports); err != nil {
		return nil, fmt.Errorf("%s: %w", ReportJSONKey, err)
	}
	return reports, nil
}
