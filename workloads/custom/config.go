package custom

import (
	"bytes"
	"encoding/json"
	"fmt"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// configFile is the parser configuration's key in the invocation's files.
const configFile = "custom-parser.json"

// configVersion is bumped when parserConfig changes incompatibly: the
// operator writes it, a runner of another release may read it.
const configVersion = 1

// parserConfig is what the parser needs of the spec: the run's tool says
// nothing of its format, its primary metric or its units.
type parserConfig struct {
	Version int                        `json:"version"`
	Tool    string                     `json:"tool"`
	Format  benchv1.CustomResultFormat `json:"format"`
	// ResultFile is the base name of the result file; empty: the output.
	ResultFile string        `json:"resultFile,omitempty"`
	Primary    results.Key   `json:"primary"`
	Metrics    []declaration `json:"metrics,omitempty"`
}

// declaration is a unit and direction the user declared for a metric.
type declaration struct {
	Name      string            `json:"name"`
	Unit      string            `json:"unit,omitempty"`
	Direction results.Direction `json:"direction,omitempty"`
}

func encodeConfig(spec *benchv1.WorkloadSpec) []byte {
	c := spec.Custom
	cfg := parserConfig{Version: configVersion, Tool: toolName(c), Format: c.Format, ResultFile: c.ResultFile,
		Primary: results.Key{Name: c.PrimaryMetric.Name, Operation: c.PrimaryMetric.Operation}}
	for _, m := range c.Metrics {
		cfg.Metrics = append(cfg.Metrics, declaration{Name: m.Name, Unit: m.Unit, Direction: m.Direction})
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		panic(err) // strings and a key: never fails
	}
	return out
}

func decodeConfig(data []byte) (parserConfig, error) {
	var cfg parserConfig
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, fmt.Errorf("no parser configuration: the operator passes the spec's format, primary metric and declarations as dbperf-runner --parser-config (%s)", configFile)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("the parser configuration is unreadable: %w", err)
	}
	if cfg.Version != configVersion {
		return cfg, fmt.Errorf("the parser configuration is version %d; this dbperf-runner reads version %d: run the runner image of the operator's release", cfg.Version, configVersion)
	}
	switch cfg.Format {
	case benchv1.CustomResultJSON, benchv1.CustomLines, benchv1.CustomOpenMetrics:
	default:
		return cfg, fmt.Errorf("the parser configuration names format %q: want %s, %s or %s", cfg.Format, benchv1.CustomResultJSON, benchv1.CustomLines, benchv1.CustomOpenMetrics)
	}
	if cfg.Tool == "" {
		cfg.Tool = "the custom tool"
	}
	return cfg, nil
}

// declared returns the user's declaration of a metric.
func (c parserConfig) declared(name string) (declaration, bool) {
	for _, d := range c.Metrics {
		if d.Name == name {
			return d, true
		}
	}
	return declaration{}, false
}
