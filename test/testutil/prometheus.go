package testutil

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/dbperf-io/dbperf-operator/internal/certs"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
)

// RequirePrometheus returns the paths of prometheus and node_exporter, or
// skips the test naming what is missing: hack/install-deps.sh installs
// both (Debian's prometheus and prometheus-node-exporter), so CI runs the
// test; under CI (CI set) a missing one fails it instead.
func RequirePrometheus(t testing.TB) (prometheus, nodeExporter string) {
	t.Helper()
	prom, err1 := localdb.Tool("prometheus")
	node, err2 := localdb.Tool("prometheus-node-exporter", "/usr/bin/node_exporter")
	for _, err := range []error{err1, err2} {
		if err == nil {
			continue
		}
		msg := fmt.Sprintf("%v: bash hack/install-deps.sh installs Debian's prometheus and prometheus-node-exporter", err)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return prom, node
}

// StartNodeExporter starts a real node_exporter on 127.0.0.1 with the
// collectors the telemetry reads (CPU, memory, load, disks, network); it
// stops with the test. It returns its host:port.
func StartNodeExporter(t testing.TB) string {
	t.Helper()
	addr := startNodeExporter(t)
	waitHTTP(t, "http://"+addr+"/metrics", 15*time.Second)
	return addr
}

// StartNodeExporterWith is StartNodeExporter with a web configuration
// (the exporter toolkit's YAML: tls_server_config, basic_auth_users),
// written beside the files it names; it returns the host:port once the
// exporter accepts connections.
func StartNodeExporterWith(t testing.TB, webConfig string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(file, []byte(webConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return startNodeExporter(t, "--web.config.file="+file)
}

// StartSecuredNodeExporter starts a node_exporter serving HTTPS for the
// name localhost with basic auth of one user, as a host outside a
// cluster is often exposed; it returns the port and the PEM of the CA
// that signed its certificate.
func StartSecuredNodeExporter(t testing.TB, username, password string) (port int, caPEM []byte) {
	t.Helper()
	b, err := certs.Issue("hosts", []string{"localhost"}, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	for file, data := range map[string][]byte{cert: b.Server.Cert, key: b.Server.Key} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	addr := StartNodeExporterWith(t, fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  %s: %s\n",
		cert, key, username, hash))
	_, p, _ := net.SplitHostPort(addr)
	port, _ = strconv.Atoi(p)
	return port, b.CA.Cert
}

func startNodeExporter(t testing.TB, extra ...string) string {
	t.Helper()
	RequirePrometheus(t)
	n, err := localdb.StartNodeExporter(extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return n.Address
}

// ScrapeTarget is one static target of the test Prometheus; Labels replace
// or add target labels (an "instance" label names the node, as a
// cluster's relabelling does). Targets of the same Job share its scrape
// config: its MetricsPath (default /metrics) and Scheme (default http),
// HTTPS without verifying the certificate when InsecureSkipVerify is set
// (a cluster's kubelet job: a kubelet's serving certificate is often
// self-signed).
type ScrapeTarget struct {
	Job, Address       string
	Labels             map[string]string
	MetricsPath        string
	Scheme             string
	InsecureSkipVerify bool
}

// StartPrometheus starts a real Prometheus on 127.0.0.1 scraping the
// targets every interval, with its storage in a temporary directory; it
// stops with the test. It returns the API's base URL once Prometheus is
// ready.
func StartPrometheus(t testing.TB, interval time.Duration, targets ...ScrapeTarget) string {
	t.Helper()
	return StartPrometheusAt(t, fmt.Sprintf("127.0.0.1:%d", FreePort(t)), interval, targets...)
}

// StartPrometheusAt is StartPrometheus listening on addr (host:port), for
// a test that must give Prometheus' URL out before its targets are known.
func StartPrometheusAt(t testing.TB, addr string, interval time.Duration, targets ...ScrapeTarget) string {
	t.Helper()
	bin, _ := RequirePrometheus(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, []byte(prometheusConfig(interval, targets)), 0o644); err != nil {
		t.Fatal(err)
	}
	startProcess(t, bin, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	url := "http://" + addr
	waitHTTP(t, url+"/-/ready", 30*time.Second)
	waitScraped(t, url, len(targets), 30*time.Second)
	return url
}

// waitScraped waits until Prometheus has scraped every target once:
// ready, it applies its targets only after a few seconds (the scrape
// manager's reload tick), and a window measured before then has no
// samples at its start. A cluster's Prometheus has been scraping long
// before a benchmark starts.
func waitScraped(t testing.TB, url string, targets int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		var body struct {
			Data struct {
				ActiveTargets []struct {
					ScrapeURL, Health, LastError string
				} `json:"activeTargets"`
			} `json:"data"`
		}
		resp, err := http.Get(url + "/api/v1/targets?state=active")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&body)
			_ = resp.Body.Close()
		}
		up := 0
		last = fmt.Sprint(err)
		for _, tg := range body.Data.ActiveTargets {
			if tg.Health == "up" {
				up++
			} else {
				last = fmt.Sprintf("%s: %s %s", tg.ScrapeURL, tg.Health, tg.LastError)
			}
		}
		if err == nil && up == targets {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("Prometheus did not scrape its %d targets within %s (last: %s)", targets, within, last)
}

func prometheusConfig(interval time.Duration, targets []ScrapeTarget) string {
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\nscrape_configs:\n", interval, interval)
	var jobs []string
	byJob := map[string][]ScrapeTarget{}
	for _, tg := range targets {
		if _, ok := byJob[tg.Job]; !ok {
			jobs = append(jobs, tg.Job)
		}
		byJob[tg.Job] = append(byJob[tg.Job], tg)
	}
	for _, job := range jobs {
		first := byJob[job][0]
		fmt.Fprintf(&b, "  - job_name: %q\n", job)
		if first.MetricsPath != "" {
			fmt.Fprintf(&b, "    metrics_path: %q\n", first.MetricsPath)
		}
		if first.Scheme != "" {
			fmt.Fprintf(&b, "    scheme: %q\n", first.Scheme)
		}
		if first.InsecureSkipVerify {
			b.WriteString("    tls_config:\n      insecure_skip_verify: true\n")
		}
		b.WriteString("    static_configs:\n")
		for _, tg := range byJob[job] {
			fmt.Fprintf(&b, "      - targets: [%q]\n", tg.Address)
			if len(tg.Labels) > 0 {
				b.WriteString("        labels:\n")
				for k, v := range tg.Labels {
					fmt.Fprintf(&b, "          %s: %q\n", k, v)
				}
			}
		}
	}
	return b.String()
}

// startProcess runs a server for the test, its output in the test's log
// when it fails.
func startProcess(t testing.TB, bin string, args ...string) {
	t.Helper()
	var out strings.Builder
	cmd := exec.Command(bin, args...)
	// One writer for both: exec then writes from one goroutine at a time.
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(bin), out.String())
		}
	})
}

// waitHTTP polls a URL until it answers 200.
func waitHTTP(t testing.TB, url string, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s did not answer 200 within %s (last error: %v)", url, within, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
