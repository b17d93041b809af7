package prometheus

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// podSpecs are cAdvisor's quantities for the run's target and
// load-generator pods. Per-container series (CPU, memory, disk) are summed
// per pod over its containers; network series belong to the pod's sandbox,
// so they are selected without the container matchers, as kube-prometheus'
// dashboards do.
func podSpecs(c Config, pods []telemetry.Subject) []spec {
	m := c.Metrics
	ctr := matchers(podMatchers(c, pods), c.ContainerSelector)
	pod := podMatchers(c, pods)
	by := c.Labels.Pod
	rate := func(metric, sel string) func(string) string {
		return func(rng string) string {
			return fmt.Sprintf("sum by (%s) (rate(%s{%s}[%s]))", by, metric, sel, rng)
		}
	}
	perSecond := func(base, unit, metric, sel string, series bool) spec {
		s := spec{base: base, unit: unit, dir: results.Neutral, expr: rate(metric, sel), sumTargets: true}
		if series {
			s.series = s.expr
		}
		return s
	}
	cpu := perSecond("cpuCores", "cores", m.CPUUsage, ctr, true)
	cpu.p95, cpu.everySubject = true, true
	return []spec{
		cpu,
		perSecond("cpuUserCores", "cores", m.CPUUser, ctr, false),
		perSecond("cpuSystemCores", "cores", m.CPUSystem, ctr, false),
		{base: "cpuThrottledPercent", unit: "%", dir: results.LowerIsBetter, expr: func(rng string) string {
			return fmt.Sprintf("100 * sum by (%s) (increase(%s{%s}[%s])) / sum by (%s) (increase(%s{%s}[%s]))",
				by, m.CFSThrottledPeriods, ctr, rng, by, m.CFSPeriods, ctr, rng)
		}},
		{base: "memoryWorkingSetBytesMax", unit: "bytes", dir: results.Neutral, sumTargets: true,
			expr: func(rng string) string {
				return fmt.Sprintf("sum by (%s) (max_over_time(%s{%s}[%s]))", by, m.MemoryWorkingSet, ctr, rng)
			},
			seriesBase: "memoryWorkingSetBytes",
			series: func(string) string {
				return fmt.Sprintf("sum by (%s) (%s{%s})", by, m.MemoryWorkingSet, ctr)
			}},
		{base: "oomEvents", unit: "count", dir: results.LowerIsBetter, sumTargets: true, expr: func(rng string) string {
			return fmt.Sprintf("sum by (%s) (increase(%s{%s}[%s]))", by, m.OOMEvents, ctr, rng)
		}},
		perSecond("networkReceiveBytesPerSecond", "bytes/s", m.NetworkReceiveBytes, pod, true),
		perSecond("networkTransmitBytesPerSecond", "bytes/s", m.NetworkTransmitBytes, pod, true),
		perSecond("networkReceivePacketsPerSecond", "packets/s", m.NetworkReceivePackets, pod, false),
		perSecond("networkTransmitPacketsPerSecond", "packets/s", m.NetworkTransmitPackets, pod, false),
		perSecond("diskReadBytesPerSecond", "bytes/s", m.FSReadBytes, ctr, false),
		perSecond("diskWriteBytesPerSecond", "bytes/s", m.FSWriteBytes, ctr, false),
		perSecond("diskReadsPerSecond", "ops/s", m.FSReads, ctr, false),
		perSecond("diskWritesPerSecond", "ops/s", m.FSWrites, ctr, false),
	}
}

// podMatchers select the pods by name in the run's namespace.
func podMatchers(c Config, pods []telemetry.Subject) string {
	var sel []string
	if c.Namespace != "" {
		sel = append(sel, fmt.Sprintf("%s=%s", c.Labels.Namespace, strconv.Quote(c.Namespace)))
	}
	sel = append(sel, fmt.Sprintf("%s=~%s", c.Labels.Pod, strconv.Quote(alternatives(names(pods)))))
	return matchers(strings.Join(sel, ","), c.PodSelector)
}

// podScope maps a result to its pod's subject.
func podScope(c Config, pods []telemetry.Subject) scope {
	byName := map[string]telemetry.Subject{}
	for _, p := range pods {
		byName[p.Name] = p
	}
	return scope{subjects: pods, of: func(m model.Metric) (telemetry.Subject, bool) {
		s, ok := byName[string(m[model.LabelName(c.Labels.Pod)])]
		return s, ok
	}}
}

func names(subjects []telemetry.Subject) []string {
	out := make([]string, len(subjects))
	for i, s := range subjects {
		out[i] = s.Name
	}
	return out
}

// alternatives is a regular expression matching exactly one of the names.
func alternatives(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return strings.Join(quoted, "|")
}

// matchers joins non-empty matcher lists.
func matchers(lists ...string) string {
	var out []string
	for _, l := range lists {
		if l = strings.Trim(strings.TrimSpace(l), ","); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, ",")
}
