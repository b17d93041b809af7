package prometheus

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// File is the Prometheus source's settings as an install gives them: the
// chart's values under telemetry.prometheus (all but url and settleTime),
// rendered into a ConfigMap the manager reads with --prometheus-config.
// Every field of Config but the address (--prometheus-url) and the
// namespace (the run's) is here; an empty field keeps its default.
type File struct {
	// Step, RateRange and Timeout are durations ("5s").
	Step      string `json:"step,omitempty"`
	RateRange string `json:"rateRange,omitempty"`
	Timeout   string `json:"timeout,omitempty"`
	// Labels are the label names the cluster's series carry.
	Labels Labels `json:"labels,omitempty"`
	// Selectors are extra matchers, `name="value"` joined by commas.
	Selectors FileSelectors `json:"selectors,omitempty"`
	// Metrics rename series, by MetricKeys (cpuUsage: container_cpu_usage_seconds_total).
	Metrics map[string]string `json:"metrics,omitempty"`
	// Queries are the user's own, for every run.
	Queries []Query `json:"queries,omitempty"`
}

// FileSelectors are Config's selectors as the values spell them.
type FileSelectors struct {
	Container     string `json:"container,omitempty"`
	Pod           string `json:"pod,omitempty"`
	Node          string `json:"node,omitempty"`
	NetworkDevice string `json:"networkDevice,omitempty"`
}

// ValuesPath is where the chart's values hold the file's fields: the
// errors name the value to change.
const ValuesPath = "telemetry.prometheus"

// MetricKeys are the names of Metrics' fields as the values spell them
// (lowerCamel), in the struct's order.
func MetricKeys() []string {
	t := reflect.TypeOf(Metrics{})
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i] = lowerCamel(t.Field(i).Name)
	}
	return keys
}

// lowerCamel lowers a field name's leading capitals: CPUUsage → cpuUsage,
// NodeCPU → nodeCPU, OOMEvents → oomEvents.
func lowerCamel(s string) string {
	r := []rune(s)
	n := 0
	for n < len(r) && unicode.IsUpper(r[n]) {
		n++
	}
	if n > 1 && n < len(r) {
		n-- // the last capital begins the next word
	}
	for i := range n {
		r[i] = unicode.ToLower(r[i])
	}
	return string(r)
}

// LoadFile reads the file (YAML or JSON; unknown keys refused) into the
// Config of the Prometheus at address, validated: each error names the
// chart value to change.
func LoadFile(b []byte, address string) (Config, error) {
	var f File
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		return Config{}, fmt.Errorf("%s: %w", ValuesPath, err)
	}
	c := Config{Address: address, Labels: f.Labels, Queries: f.Queries}
	var errs []string
	fail := func(path, format string, args ...any) {
		errs = append(errs, ValuesPath+"."+path+": "+fmt.Sprintf(format, args...))
	}
	for _, d := range []struct {
		path string
		v    string
		to   *time.Duration
	}{{"step", f.Step, &c.Step}, {"rateRange", f.RateRange, &c.RateRange}, {"timeout", f.Timeout, &c.Timeout}} {
		if d.v == "" {
			continue
		}
		v, err := time.ParseDuration(d.v)
		if err != nil || v <= 0 {
			fail(d.path, "%q is not a positive duration such as 5s", d.v)
			continue
		}
		*d.to = v
	}
	for _, l := range []struct{ path, v string }{{"labels.namespace", f.Labels.Namespace}, {"labels.pod", f.Labels.Pod},
		{"labels.container", f.Labels.Container}, {"labels.node", f.Labels.Node}} {
		if l.v != "" && !model.LabelName(l.v).IsValidLegacy() {
			fail(l.path, "%q is not a Prometheus label name", l.v)
		}
	}
	for _, s := range []struct {
		path string
		v    string
		to   *string
	}{{"selectors.container", f.Selectors.Container, &c.ContainerSelector}, {"selectors.pod", f.Selectors.Pod, &c.PodSelector},
		{"selectors.node", f.Selectors.Node, &c.NodeSelector}, {"selectors.networkDevice", f.Selectors.NetworkDevice, &c.NetworkDeviceSelector}} {
		if err := checkMatchers(s.v); err != nil {
			fail(s.path, "%q: %v", s.v, err)
		}
		*s.to = s.v
	}
	keys := MetricKeys()
	mv := reflect.ValueOf(&c.Metrics).Elem()
	for _, k := range sortedKeys(f.Metrics) {
		i := slices.Index(keys, k)
		switch {
		case i < 0:
			fail("metrics."+k, "not a series the source reads (one of %s)", strings.Join(keys, ", "))
		case !model.IsValidLegacyMetricName(f.Metrics[k]):
			fail("metrics."+k, "%q is not a Prometheus metric name", f.Metrics[k])
		default:
			mv.Field(i).SetString(f.Metrics[k])
		}
	}
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	if err := c.withDefaults().validate(); err != nil {
		return Config{}, fmt.Errorf("%s.%s", ValuesPath, strings.TrimPrefix(err.Error(), "prometheus: "))
	}
	return c, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// matcher is one label matcher of a selector: name, operator, quoted value.
var matcher = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*")\s*$`)

// checkMatchers checks a selector as PromQL reads the inside of {…}:
// matchers joined by commas, each a label name, an operator and a quoted
// value, a regular expression where the operator asks for one.
func checkMatchers(sel string) error {
	if strings.TrimSpace(sel) == "" {
		return nil
	}
	for _, part := range splitMatchers(sel) {
		m := matcher.FindStringSubmatch(part)
		if m == nil {
			return fmt.Errorf("%q is not a matcher such as job=\"node-exporter\"", strings.TrimSpace(part))
		}
		v, err := strconv.Unquote(m[3])
		if err != nil {
			return fmt.Errorf("%q: %w", part, err)
		}
		if m[2] == "=~" || m[2] == "!~" {
			if _, err := regexp.Compile("^(?:" + v + ")$"); err != nil {
				return fmt.Errorf("%q: %w", strings.TrimSpace(part), err)
			}
		}
	}
	return nil
}

// splitMatchers splits a selector at the commas outside quotes.
func splitMatchers(sel string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(sel); i++ {
		switch {
		case sel[i] == '\\' && quoted:
			i++
		case sel[i] == '"':
			quoted = !quoted
		case sel[i] == ',' && !quoted:
			out = append(out, sel[start:i])
			start = i + 1
		}
	}
	return append(out, sel[start:])
}
