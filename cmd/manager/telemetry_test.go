package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
)

// The resource source each flag combination makes, and the combinations
// refused with the flag to fix.
func TestTelemetryFlags(t *testing.T) {
	settings := func(body string) string {
		p := filepath.Join(t.TempDir(), "prometheus.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := settings("labels: {pod: pod_name}\nselectors: {node: 'job=\"node-exporter\"'}\n")
	for name, tc := range map[string]struct {
		o                  telemetryOptions
		kubelet, prom, err bool
		errWants           string
	}{
		"none by default":        {o: telemetryOptions{resources: "none", interval: 10 * time.Second}},
		"kubelet":                {o: telemetryOptions{resources: "kubelet", interval: time.Second}, kubelet: true},
		"prometheus":             {o: telemetryOptions{resources: "prometheus", prometheusURL: "http://prom:9090"}, prom: true},
		"prometheus without URL": {o: telemetryOptions{resources: "prometheus"}, err: true, errWants: "--prometheus-url"},
		"URL without prometheus": {o: telemetryOptions{resources: "none", prometheusURL: "http://prom:9090"}, err: true, errWants: "--telemetry-resources=prometheus"},
		"unknown source":         {o: telemetryOptions{resources: "cadvisor"}, err: true, errWants: "none, kubelet or prometheus"},
		"too fast sampling":      {o: telemetryOptions{resources: "kubelet", interval: 100 * time.Millisecond}, err: true, errWants: "at least 1s"},
		"prometheus settings":    {o: telemetryOptions{resources: "prometheus", prometheusURL: "http://prom:9090", prometheusConfig: good}, prom: true},
		"settings without prometheus": {o: telemetryOptions{resources: "none", prometheusConfig: good}, err: true,
			errWants: "--telemetry-resources=prometheus"},
		"no settings file": {o: telemetryOptions{resources: "prometheus", prometheusURL: "http://prom:9090", prometheusConfig: "/nonexistent/p.yaml"}, err: true,
			errWants: "--prometheus-config"},
		"bad selector": {o: telemetryOptions{resources: "prometheus", prometheusURL: "http://prom:9090", prometheusConfig: settings("selectors: {node: job=node-exporter}\n")},
			err: true, errWants: "telemetry.prometheus.selectors.node"},
		"misspelt key": {o: telemetryOptions{resources: "prometheus", prometheusURL: "http://prom:9090", prometheusConfig: settings("lables: {pod: pod_name}\n")},
			err: true, errWants: `unknown field "lables"`},
	} {
		t.Run(name, func(t *testing.T) {
			rs, err := tc.o.build(fake.NewClientset())
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), tc.errWants) {
					t.Fatalf("error %v, want one naming %s", err, tc.errWants)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var kubelet, prom bool
			if rs != nil {
				kubelet, prom = rs.Sources()
			}
			if kubelet != tc.kubelet {
				t.Errorf("kubelet source %v, want %v", kubelet, tc.kubelet)
			}
			if prom != tc.prom {
				t.Errorf("prometheus source %v, want %v", prom, tc.prom)
			}
		})
	}
}
