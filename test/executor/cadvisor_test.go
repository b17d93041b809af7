package executor

import (
	"crypto/tls"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// TestCadvisorAgreesWithProc scrapes the test kubelet's /metrics/cadvisor
// over HTTPS twice, 5 s apart, while a real burner limited to half a core
// runs in a pod cgroup: its series carry a kubelet's labels, for the pod
// cgroup (container="") and the container; the CPU between the scrapes
// agrees with the burner's own from /proc, throttled periods show its
// limit, the quota and period are the limit's, the working set holds the
// 64 MiB it touched.
func TestCadvisorAgreesWithProc(t *testing.T) {
	e, cmd := startBurnerPod(t)
	port, err := localdb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	srv, err := e.serveLogs(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	time.Sleep(time.Second) // the burner's page touching is over

	first, window := scrapeCadvisor(t, addr), testutil.StartCPUWindow(t, cmd.Process.Pid)
	time.Sleep(5 * time.Second)
	last, want := scrapeCadvisor(t, addr), window.Stop(t)

	var id string
	for _, pc := range e.pods {
		id = pc.cgroup.id()
	}
	for _, ctr := range []string{"tool", ""} {
		value := func(fams map[string]*dto.MetricFamily, name string) float64 {
			t.Helper()
			return seriesValue(t, fams, name, map[string]string{"namespace": "ns", "pod": "burner", "container": ctr, "id": id})
		}
		cores := (value(last, "container_cpu_usage_seconds_total") - value(first, "container_cpu_usage_seconds_total")) / window.Seconds()
		if want < 0.2 {
			t.Fatalf("the burner used %.3f cores: it did not run", want)
		}
		testutil.AgreesWithin(t, fmt.Sprintf("container %q: cores between the scrapes", ctr), cores, want, 0.2)
		usage := value(last, "container_cpu_usage_seconds_total")
		if modes := value(last, "container_cpu_user_seconds_total") + value(last, "container_cpu_system_seconds_total"); math.Abs(modes-usage) > 0.2*usage {
			t.Errorf("container %q: user + system %.2f s, usage %.2f s", ctr, modes, usage)
		}
		if q, p := value(last, "container_spec_cpu_quota"), value(last, "container_spec_cpu_period"); q != 50000 || p != 100000 {
			t.Errorf("container %q: quota %g per period %g µs, want 50000 per 100000 (half a core)", ctr, q, p)
		}
		periods := value(last, "container_cpu_cfs_periods_total") - value(first, "container_cpu_cfs_periods_total")
		throttled := value(last, "container_cpu_cfs_throttled_periods_total") - value(first, "container_cpu_cfs_throttled_periods_total")
		// A busy loop under half a core is throttled, in most periods on
		// an idle machine, in fewer when others take the CPU.
		if periods < 10 || throttled <= 0 || throttled > periods {
			t.Errorf("container %q: %g of %g periods throttled: want some of at least 10", ctr, throttled, periods)
		}
		if ws := value(last, "container_memory_working_set_bytes"); ws < 64<<20 || ws > 256<<20 {
			t.Errorf("container %q: working set %.0f, want 64-256 MiB (the burner holds 64 MiB)", ctr, ws)
		}
	}
	if got := seriesLabels(last, "container_cpu_usage_seconds_total", "tool"); got["image"] != "python:3" || got["name"] == "" {
		t.Errorf("the container's series have labels %v, want its image and a name", got)
	}
}

func scrapeCadvisor(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test kubelet's throwaway certificate
	resp, err := c.Get("https://" + addr + "/metrics/cadvisor")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics/cadvisor: %s", resp.Status)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics/cadvisor is not Prometheus' text format: %v", err)
	}
	return fams
}

// seriesValue is the one series of the family whose labels include want.
func seriesValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no %s", name)
	}
	var found []float64
	for _, m := range f.GetMetric() {
		if hasLabels(m, want) {
			if m.GetCounter() != nil {
				found = append(found, m.GetCounter().GetValue())
			} else {
				found = append(found, m.GetGauge().GetValue())
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d series of %s with labels %v, want one", len(found), name, want)
	}
	return found[0]
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}

func seriesLabels(fams map[string]*dto.MetricFamily, name, container string) map[string]string {
	for _, m := range fams[name].GetMetric() {
		if hasLabels(m, map[string]string{"container": container}) {
			out := map[string]string{}
			for _, l := range m.GetLabel() {
				out[l.GetName()] = l.GetValue()
			}
			return out
		}
	}
	return nil
}
