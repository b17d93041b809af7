package controllers

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// specFuzzer makes bad (and some good) specs: it starts from a valid spec
// (a sample of config/samples or a test's) and mutates it along the CRD's
// own schema, so that a mutation reaches every field the API has, with
// values at and past its bounds, of the wrong type, too long, in unicode.
type specFuzzer struct {
	rnd *rand.Rand
	// runSchema and cmpSchema are the schemas of the kinds' spec.
	runSchema, cmpSchema *apiextensionsv1.JSONSchemaProps
	runSeeds, cmpSeeds   []map[string]any
}

func newSpecFuzzer(t *testing.T, seed int64) *specFuzzer {
	t.Helper()
	f := &specFuzzer{rnd: rand.New(rand.NewSource(seed))}
	f.runSchema = crdSpecSchema(t, "bench.dbperf.io_benchmarkruns.yaml")
	f.cmpSchema = crdSpecSchema(t, "bench.dbperf.io_benchmarkcomparisons.yaml")
	samples := filepath.Join(testutil.RepoRoot(), "config", "samples")
	files, _ := filepath.Glob(filepath.Join(samples, "*.yaml"))
	nested, _ := filepath.Glob(filepath.Join(samples, "*", "*.yaml"))
	for _, file := range append(files, nested...) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(raw), "\n---\n") {
			var obj map[string]any
			if yaml.Unmarshal([]byte(doc), &obj) != nil || obj == nil {
				continue
			}
			spec, _ := obj["spec"].(map[string]any)
			switch obj["kind"] {
			case "BenchmarkRun":
				f.runSeeds = append(f.runSeeds, spec)
			case "BenchmarkComparison":
				f.cmpSeeds = append(f.cmpSeeds, spec)
			}
		}
	}
	for _, s := range []benchv1.BenchmarkRunSpec{kit.MeasureOnly("x", 8, 2).Spec, customRunSpec(), queryRunSpec()} {
		f.runSeeds = append(f.runSeeds, toMap(t, s))
	}
	f.cmpSeeds = append(f.cmpSeeds, toMap(t, kit.Comparison("x", benchv1.OrderConcurrent, 2).Spec))
	if len(f.runSeeds) < 5 || len(f.cmpSeeds) < 2 {
		t.Fatalf("only %d run and %d comparison seeds", len(f.runSeeds), len(f.cmpSeeds))
	}
	return f
}

func customRunSpec() benchv1.BenchmarkRunSpec {
	s := kit.MeasureOnly("x", 8, 1).Spec
	s.Workload = kit.CustomWorkload()
	return s
}

func queryRunSpec() benchv1.BenchmarkRunSpec {
	s := kit.MeasureOnly("x", 8, 1).Spec
	s.Workload = benchv1.WorkloadSpec{QueryBench: &benchv1.QueryWorkload{Driver: benchv1.QueryDriverPostgres,
		Queries: []benchv1.NamedQuery{{Name: "Q1", SQL: "SELECT 1"}, {Name: "Q2", SQL: "SELECT 2"}}}}
	return s
}

func toMap(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func crdSpecSchema(t *testing.T, file string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "config", "crd", "bases", file))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	return &spec
}

// runSpec is a mutated copy of a seed run spec.
func (f *specFuzzer) runSpec() map[string]any {
	spec := deepCopyJSON(f.runSeeds[f.rnd.Intn(len(f.runSeeds))]).(map[string]any)
	f.mutate(spec, f.runSchema, 1+f.rnd.Intn(3))
	return spec
}

// comparisonSpec is a mutated copy of a seed comparison, its template
// sometimes a run seed and its patches random pieces of run specs.
func (f *specFuzzer) comparisonSpec() map[string]any {
	spec := deepCopyJSON(f.cmpSeeds[f.rnd.Intn(len(f.cmpSeeds))]).(map[string]any)
	if f.rnd.Intn(2) == 0 {
		spec["template"] = deepCopyJSON(f.runSeeds[f.rnd.Intn(len(f.runSeeds))])
	}
	if variants, ok := spec["variants"].([]any); ok {
		for _, v := range variants {
			if vm, ok := v.(map[string]any); ok && f.rnd.Intn(2) == 0 {
				patch := map[string]any{}
				f.mutate(patch, f.runSchema, 1+f.rnd.Intn(2))
				vm["patch"] = patch
			}
		}
	}
	spec["runsPerVariant"] = 1 + f.rnd.Intn(2)
	if f.rnd.Intn(3) > 0 {
		if tmpl, ok := spec["template"].(map[string]any); ok {
			tmpl["allowSharedNodes"] = true
		}
	}
	f.mutate(spec, f.cmpSchema, f.rnd.Intn(3))
	return spec
}

// node is an object of the spec with its schema, where a mutation can happen.
type node struct {
	obj    map[string]any
	schema *apiextensionsv1.JSONSchemaProps
}

func (f *specFuzzer) mutate(spec map[string]any, schema *apiextensionsv1.JSONSchemaProps, n int) {
	for range n {
		var nodes []node
		collectNodes(spec, schema, &nodes)
		at := nodes[f.rnd.Intn(len(nodes))]
		props := sortedProps(at.schema)
		switch k := f.rnd.Intn(10); {
		case k < 6 && len(props) > 0: // a field of the schema, present or not
			name := props[f.rnd.Intn(len(props))]
			s := at.schema.Properties[name]
			at.obj[name] = f.value(&s, 0)
		case k < 8 && len(at.obj) > 0: // a field goes
			keys := sortedKeys(at.obj)
			delete(at.obj, keys[f.rnd.Intn(len(keys))])
		case k < 9 && len(props) > 0: // a field of the wrong type
			at.obj[props[f.rnd.Intn(len(props))]] = f.junk()
		default: // a field the schema does not have
			at.obj[f.str(12)] = f.junk()
		}
	}
}

// collectNodes lists the objects of a spec that have a schema of properties.
func collectNodes(v any, s *apiextensionsv1.JSONSchemaProps, out *[]node) {
	if s == nil {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if len(s.Properties) > 0 {
			*out = append(*out, node{obj: x, schema: s})
		}
		for _, k := range sortedKeys(x) { // in order: a seed replays
			if p, ok := s.Properties[k]; ok {
				collectNodes(x[k], &p, out)
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for _, child := range x {
				collectNodes(child, s.Items.Schema, out)
			}
		}
	}
}

// value is a value for a schema: mostly of its type, at or past its
// bounds, sometimes of another type.
func (f *specFuzzer) value(s *apiextensionsv1.JSONSchemaProps, depth int) any {
	if f.rnd.Intn(12) == 0 {
		return f.junk()
	}
	if s.XIntOrString {
		return []any{"100m", "1Gi", "-1", "abc", 5, -3, "1e400"}[f.rnd.Intn(7)]
	}
	switch s.Type {
	case "object":
		out := map[string]any{}
		if depth > 4 {
			return out
		}
		required := map[string]bool{}
		for _, r := range s.Required {
			required[r] = true
		}
		for _, name := range sortedProps(s) {
			if required[name] && f.rnd.Intn(8) > 0 || f.rnd.Intn(4) == 0 {
				p := s.Properties[name]
				out[name] = f.value(&p, depth+1)
			}
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			for range f.rnd.Intn(4) {
				out[f.key()] = f.value(s.AdditionalProperties.Schema, depth+1)
			}
		}
		return out
	case "array":
		n := []int{0, 1, 1, 2, 3, 5}[f.rnd.Intn(6)]
		if s.MaxItems != nil && f.rnd.Intn(5) == 0 {
			n = int(*s.MaxItems) + f.rnd.Intn(2) // at the limit, or one past it
		}
		if f.rnd.Intn(40) == 0 {
			n = 3000 // a huge list
		}
		out := make([]any, 0, n)
		for range n {
			if s.Items == nil || s.Items.Schema == nil {
				out = append(out, f.junk())
				continue
			}
			if n > 64 { // small items, so that the request stays within what the API server reads
				out = append(out, f.small(s.Items.Schema))
				continue
			}
			out = append(out, f.value(s.Items.Schema, depth+1))
		}
		return out
	case "string":
		return f.stringFor(s)
	case "integer":
		return f.integerFor(s)
	case "number":
		return []any{0, -0.5, 0.5, 1, 50, 99.99, 100, 100.5, 1e308, -1e308, 5e-324, 1e9}[f.rnd.Intn(12)]
	case "boolean":
		return f.rnd.Intn(2) == 0
	}
	return f.junk()
}

// small is a short value of a schema, for the items of a huge list.
func (f *specFuzzer) small(s *apiextensionsv1.JSONSchemaProps) any {
	switch s.Type {
	case "integer":
		return f.rnd.Intn(100)
	case "string":
		if len(s.Enum) > 0 {
			var v string
			_ = json.Unmarshal(s.Enum[f.rnd.Intn(len(s.Enum))].Raw, &v)
			return v
		}
		return f.str(6)
	case "object":
		return map[string]any{}
	}
	return f.rnd.Intn(2)
}

func (f *specFuzzer) stringFor(s *apiextensionsv1.JSONSchemaProps) any {
	if len(s.Enum) > 0 && f.rnd.Intn(3) > 0 {
		var v string
		_ = json.Unmarshal(s.Enum[f.rnd.Intn(len(s.Enum))].Raw, &v)
		return v
	}
	switch f.rnd.Intn(9) {
	case 0, 1: // durations, good and bad: every duration field is a string
		return []string{"1s", "5s", "90s", "1m", "2m", "1h", "25h", "0s", "-1s", "1.5s", "100ms", "1us",
			"9999999h", "1m30s", "5 minutes", "P1D", ""}[f.rnd.Intn(17)]
	case 2:
		return []string{"postgres", "mysql", "valkey", "Always", "Interleaved", "HigherIsBetter", "tpcb-like", "a", "redis"}[f.rnd.Intn(9)]
	case 3: // at and past the length limit
		n := 300
		if s.MaxLength != nil {
			n = int(*s.MaxLength) + f.rnd.Intn(2)
		}
		return strings.Repeat("x", min(n, 300000))
	case 4:
		return "ünï©ødé ☃ 日本語 \u200b\u202e\x00"
	case 5:
		return []string{"127.0.0.1; touch /tmp/x", "../../etc/passwd", "{{threads}}", "{{", "$(DBPERF_TARGET_HOST)", "' OR 1=1 --", "db", "file:///etc/passwd", "http://x"}[f.rnd.Intn(9)]
	case 6:
		return ""
	}
	return f.str(1 + f.rnd.Intn(20))
}

func (f *specFuzzer) integerFor(s *apiextensionsv1.JSONSchemaProps) any {
	vals := []int64{0, -1, 1, 2, 3, 7, 16, 32, 100, 1000, math.MaxInt32, math.MinInt32, math.MaxInt32 + 1, 1 << 53}
	if s.Minimum != nil {
		vals = append(vals, int64(*s.Minimum), int64(*s.Minimum)-1)
	}
	if s.Maximum != nil {
		vals = append(vals, int64(*s.Maximum), int64(*s.Maximum)+1)
	}
	return vals[f.rnd.Intn(len(vals))]
}

// junk is a value of any type.
func (f *specFuzzer) junk() any {
	switch f.rnd.Intn(8) {
	case 0:
		return nil
	case 1:
		return f.str(8)
	case 2:
		return -f.rnd.Int63()
	case 3:
		return 1.5e300
	case 4:
		return []any{f.str(3), 1, true}
	case 5:
		return map[string]any{f.key(): f.str(4)}
	case 6:
		return true
	}
	return "\u00e9\u4e16"
}

const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/ é世"

func (f *specFuzzer) str(n int) string {
	r := []rune(letters)
	var b strings.Builder
	for range n {
		b.WriteRune(r[f.rnd.Intn(len(r))])
	}
	return b.String()
}

func (f *specFuzzer) key() string {
	return []string{"a", "B_C", "x.y", "DBPERF_X", "with space", "ü", strings.Repeat("k", 300), f.str(6)}[f.rnd.Intn(8)]
}

// name is an object name: mostly valid, some at or past 253 characters,
// some not DNS names at all.
func (f *specFuzzer) name(i int) string {
	base := fmt.Sprintf("fz-%d-", i)
	switch f.rnd.Intn(12) {
	case 0:
		return base + strings.Repeat("n", 253-len(base))
	case 1:
		return base + strings.Repeat("n", 254-len(base))
	case 2:
		return base + "Ünïcode"
	case 3:
		return base + strings.Repeat("a.", 60) + "z"
	}
	return base + strings.ToLower(strings.Trim(fmt.Sprintf("%x", f.rnd.Int63()), "-"))
}

func sortedProps(s *apiextensionsv1.JSONSchemaProps) []string {
	out := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func deepCopyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = deepCopyJSON(c)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = deepCopyJSON(c)
		}
		return out
	}
	return v
}

// result is what a tool might have left: up to maxMetrics metrics with
// extreme values, odd units and directions, and up to maxReasons reasons.
func (f *specFuzzer) result(tool string, maxMetrics, maxReasons int) *results.Result {
	r := results.New(tool)
	for range f.rnd.Intn(maxMetrics + 1) {
		r.Add(results.Metric{
			Name:      []string{"opsPerSecond", "latencyP99Millis", "transactionsPerSecond", f.str(10)}[f.rnd.Intn(4)],
			Operation: []string{"", "GET", "SET", f.str(5)}[f.rnd.Intn(4)],
			Value:     []float64{0, 1, -1, 1e308, -1e308, 1.7e308, 5e-324, 12345.678}[f.rnd.Intn(8)],
			Unit:      []string{"ops/s", "ms", "", f.str(4)}[f.rnd.Intn(4)],
			Direction: []results.Direction{results.HigherIsBetter, results.LowerIsBetter, results.Neutral, "Sideways"}[f.rnd.Intn(4)],
			Detail:    f.rnd.Intn(4) == 0,
			Source:    []string{"", "", "server", "kubelet"}[f.rnd.Intn(4)],
		})
	}
	if len(r.Metrics) > 0 {
		r.Primary = r.Metrics[f.rnd.Intn(len(r.Metrics))].Key()
	}
	r.Verdict = []results.Verdict{results.Succeeded, results.Succeeded, results.Invalid, results.Failed, "Bogus"}[f.rnd.Intn(5)]
	for range f.rnd.Intn(maxReasons + 1) {
		r.Reasons = append(r.Reasons, f.str(1+f.rnd.Intn(120)))
	}
	if f.rnd.Intn(2) == 0 {
		r.LoadGenerator = &results.LoadGenerator{CPUPercent: []float64{50, 1e308, -1}[f.rnd.Intn(3)], Source: "cgroup"}
	}
	return r
}
