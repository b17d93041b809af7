package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// A custom tool's parser needs the spec's format and primary metric, which
// the operator hands over in a file (--parser-config): exec and parse read
// it; exec without it, or with a missing one, is a Failed measurement that
// says why.
func TestExecAndParseWithAParserConfiguration(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "custom-parser.json")
	if err := os.WriteFile(config, []byte(`{"version":1,"tool":"bench","format":"Lines","primary":{"name":"opsPerSecond"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	output := "# dbperf-lines v1\nmetric opsPerSecond - 1500 ops/s HigherIsBetter\n"

	code, out, r := execRunner(t, "--workload", "custom", "--max-cpu-percent", "0", "--parser-config", config, "--", "printf", output)
	if code != runner.ExitValid || testutil.MetricValue(t, r, "opsPerSecond", "") != 1500 {
		t.Fatalf("exit %d, %s %v\n%s", code, r.Verdict, r.Reasons, out)
	}

	_, _, r = execRunner(t, "--workload", "custom", "--max-cpu-percent", "0", "--", "printf", output)
	testutil.CheckVerdict(t, r, results.Failed, "no parser configuration")
	_, out, r = execRunner(t, "--workload", "custom", "--max-cpu-percent", "0", "--parser-config", filepath.Join(dir, "missing.json"), "--", "printf", output)
	testutil.CheckVerdict(t, r, results.Failed, "while reading the parser configuration")
	if strings.Contains(out, "running: printf") {
		t.Errorf("the tool ran without its parser's configuration:\n%s", out)
	}

	input := filepath.Join(dir, "output.txt")
	if err := os.WriteFile(input, []byte(output), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"parse", "--workload", "custom", "--parser-config", config, "--input", input}, nil, &stdout, &stderr); code != runner.ExitValid {
		t.Fatalf("parse: exit %d: %s%s", code, stderr.String(), stdout.String())
	}
	var parsed results.Result
	if err := json.Unmarshal(stdout.Bytes(), &parsed); err != nil || parsed.Primary.Name != "opsPerSecond" {
		t.Fatalf("parse: %v %+v", err, parsed.Primary)
	}
}
