package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Every text a tool can write into its result is redacted, not only the
// reasons: a custom tool names its own version, operations, parameters,
// series and histograms.
func TestRedactResultCoversEveryText(t *testing.T) {
	const secret = "s3cr3t-pw"
	r := results.New("tool " + secret)
	r.ToolVersion = "v1-" + secret
	r.Primary = results.Key{Name: "ops", Operation: "op-" + secret}
	r.Parameters = map[string]string{"key-" + secret: "value-" + secret}
	r.Add(results.Metric{Name: "ops", Operation: "op-" + secret, Value: 1, Unit: "ops/s", Direction: results.HigherIsBetter})
	r.TimeSeries = []results.Point{{ElapsedSeconds: 1, Values: map[string]float64{"ops[" + secret + "]": 1}}}
	r.Histograms = map[string]string{"op-" + secret: "HISTFAAA"}
	r.Reasons, r.Warnings = []string{"reason " + secret}, []string{"warning " + secret}
	redactResult(r, NewRedactor(secret))
	block, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(block), secret) {
		t.Errorf("the secret is left in the result: %s", block)
	}
	if !strings.Contains(string(block), "[REDACTED]") {
		t.Errorf("nothing was redacted: %s", block)
	}
}

// The output directory a tool is told about (DBPERF_OUTPUT_DIR) exists
// when it starts, though no result file is named in it.
func TestOutputDirectoryExistsForTheTool(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	t.Setenv(pod.EnvOutputDir, dir)
	var log bytes.Buffer
	r := Exec(context.Background(), Options{Parser: lineParser{&lineSink{}}, Prepare: true,
		Command: []string{"sh", "-c", `echo data > "$DBPERF_OUTPUT_DIR/scratch"`}, Stdout: &log})
	if r.Verdict == results.Failed {
		t.Fatalf("%v\n%s", r.Reasons, log.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "scratch")); err != nil {
		t.Error(err)
	}
}
