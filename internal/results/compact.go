package results

import (
	"encoding/json"
	"fmt"
)

// MaxCompactBytes is the size of a container's termination message that
// Kubernetes keeps (4096 bytes); the compact summary must fit in it.
const MaxCompactBytes = 4096

// Compact is the summary the runner writes to its termination message: enough
// for the operator to record a measurement even when the log is gone.
type Compact struct {
	V             int            `json:"v"`
	Tool          string         `json:"tool"`
	Verdict       Verdict        `json:"verdict"`
	Reasons       []string       `json:"reasons,omitempty"`
	Primary       Key            `json:"primary"`
	Metrics       []Metric       `json:"metrics,omitempty"`
	LoadGenerator *LoadGenerator `json:"loadGenerator,omitempty"`
	ExitCode      *int           `json:"exitCode,omitempty"`
	// Dropped counts the headline metrics left out to fit the size limit.
	Dropped int `json:"dropped,omitempty"`
}

// EncodeCompact renders the compact summary of a result within limit bytes,
// dropping headline metrics from the end (the primary one is first) and
// shortening reasons until it fits.
func EncodeCompact(r *Result, limit int) ([]byte, error) {
	c := Compact{
		V: SchemaVersion, Tool: r.Tool, Verdict: r.Verdict, Reasons: r.Reasons,
		Primary: r.Primary, Metrics: r.Headline(), LoadGenerator: r.LoadGenerator, ExitCode: r.ExitCode,
	}
	for {
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		if len(raw) <= limit {
			return raw, nil
		}
		switch {
		case len(c.Reasons) > 3:
			c.Reasons = append(c.Reasons[:2:2], fmt.Sprintf("(%d more reasons in the log)", len(c.Reasons)-2))
		case len(c.Metrics) > 1:
			c.Metrics = c.Metrics[:len(c.Metrics)-1]
			c.Dropped++
		case len(c.Reasons) > 0 && len(c.Reasons[0]) > 200:
			c.Reasons = []string{c.Reasons[0][:200] + "…"}
		default:
			return nil, fmt.Errorf("the compact summary needs %d bytes, more than %d", len(raw), limit)
		}
	}
}

// DecodeCompact reads a compact summary back into a Result (without detail
// metrics and time series).
func DecodeCompact(raw []byte) (*Result, error) {
	var c Compact
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("while reading the termination message: %w", err)
	}
	if c.V == 0 || c.Tool == "" || c.Verdict == "" {
		return nil, fmt.Errorf("the termination message is not a dbperf summary")
	}
	r := &Result{
		SchemaVersion: c.V, Tool: c.Tool, Verdict: c.Verdict, Reasons: c.Reasons, Primary: c.Primary,
		Metrics: c.Metrics, LoadGenerator: c.LoadGenerator, ExitCode: c.ExitCode,
	}
	if c.Dropped > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d headline metrics were dropped to fit the termination message", c.Dropped))
	}
	return r, nil
}
