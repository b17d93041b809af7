package hoststats

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// Source names the figures' origin in the results.
const Source = telemetry.SourceHosts

// maxExpositionBytes bounds what one scrape reads: a node_exporter of a
// large host exposes a few hundred kilobytes.
const maxExpositionBytes = 32 << 20

// Host is one machine and how its node_exporter is read.
type Host struct {
	// Name is the spec's: the subject host/<Name>.
	Name string
	// Role is the host's part in the measurement: database, application,
	// loadgen or other.
	Role string
	// URL of the exposition, such as http://db-01:9100/metrics.
	URL string
	// Target: the host's CPU is the target's (the database host of an
	// external target).
	Target bool
	// Username and Password for basic auth, or BearerToken; empty: none.
	Username, Password, BearerToken string
	// TLS for an https URL; nil: the system's roots.
	TLS *tls.Config
}

// Scraper reads one host's node_exporter: it is the dbstats.Poller of a
// host, so the runner's recording loop (dbstats.Start) polls it.
type Scraper struct {
	host   Host
	client *http.Client
}

var _ dbstats.Poller = (*Scraper)(nil)

// NewScraper returns a scraper of h; timeout bounds each scrape.
func NewScraper(h Host, timeout time.Duration) *Scraper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = h.TLS
	tr.MaxIdleConnsPerHost = 1
	return &Scraper{host: h, client: &http.Client{Transport: tr, Timeout: timeout}}
}

// Source names the statistics.
func (s *Scraper) Source() string { return Source }

// Figures: none as Defs; Summarize derives a host's from its readings.
func (s *Scraper) Figures() []dbstats.Def { return nil }

// Close ends the scraper's idle connection.
func (s *Scraper) Close() error {
	s.client.CloseIdleConnections()
	return nil
}

// accept prefers the delimited protobuf exposition (the cheapest to
// parse), then the text format every exporter speaks.
var accept = string(expfmt.NewFormat(expfmt.TypeProtoDelim)) + ";q=0.7," + string(expfmt.NewFormat(expfmt.TypeTextPlain)) + ";q=0.3"

// Poll scrapes the exposition once and keeps the families the figures
// read, as counters and gauges keyed by Key.
func (s *Scraper) Poll(ctx context.Context) (dbstats.Reading, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.host.URL, nil)
	if err != nil {
		return dbstats.Reading{}, err
	}
	req.Header.Set("Accept", accept)
	switch {
	case s.host.BearerToken != "":
		req.Header.Set("Authorization", "Bearer "+s.host.BearerToken)
	case s.host.Username != "" || s.host.Password != "":
		req.SetBasicAuth(s.host.Username, s.host.Password)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return dbstats.Reading{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return dbstats.Reading{}, fmt.Errorf("%s answered %s", s.host.URL, resp.Status)
	}
	return Parse(io.LimitReader(resp.Body, maxExpositionBytes), expfmt.ResponseFormat(resp.Header))
}

// Parse reads an exposition (text, or delimited protobuf) into a reading.
func Parse(r io.Reader, format expfmt.Format) (dbstats.Reading, error) {
	dec := expfmt.NewDecoder(r, format)
	rd := dbstats.Reading{Counters: map[string]float64{}, Gauges: map[string]float64{}}
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return dbstats.Reading{}, fmt.Errorf("the exposition cannot be parsed: %w", err)
		}
		keep(&rd, &mf)
	}
	if len(rd.Counters)+len(rd.Gauges) == 0 {
		return dbstats.Reading{}, fmt.Errorf("the exposition has none of node_exporter's cpu, meminfo, loadavg, diskstats or netdev series: is it a node_exporter with those collectors?")
	}
	return rd, nil
}

// family says where one node_exporter family goes: the group its key
// starts with, the label that names the member (cpu, device), and the
// quantity.
type family struct {
	group, label, quantity string
	gauge                  bool
}

// Groups of the reading's keys.
const (
	groupCPU    = "cpu"
	groupDisk   = "disk"
	groupNet    = "net"
	groupMemory = "memory"
	groupLoad   = "load"
)

// Quantities of disks and interfaces, by node_exporter's family.
var families = map[string]family{
	"node_memory_MemTotal_bytes":               {group: groupMemory, quantity: "total", gauge: true},
	"node_memory_MemAvailable_bytes":           {group: groupMemory, quantity: "available", gauge: true},
	"node_load1":                               {group: groupLoad, quantity: "1", gauge: true},
	"node_disk_reads_completed_total":          {group: groupDisk, label: "device", quantity: "reads"},
	"node_disk_writes_completed_total":         {group: groupDisk, label: "device", quantity: "writes"},
	"node_disk_read_bytes_total":               {group: groupDisk, label: "device", quantity: "readBytes"},
	"node_disk_written_bytes_total":            {group: groupDisk, label: "device", quantity: "writtenBytes"},
	"node_disk_read_time_seconds_total":        {group: groupDisk, label: "device", quantity: "readSeconds"},
	"node_disk_write_time_seconds_total":       {group: groupDisk, label: "device", quantity: "writeSeconds"},
	"node_disk_io_time_seconds_total":          {group: groupDisk, label: "device", quantity: "ioSeconds"},
	"node_disk_io_time_weighted_seconds_total": {group: groupDisk, label: "device", quantity: "ioWeightedSeconds"},
	"node_network_receive_bytes_total":         {group: groupNet, label: "device", quantity: "receiveBytes"},
	"node_network_transmit_bytes_total":        {group: groupNet, label: "device", quantity: "transmitBytes"},
	"node_network_receive_packets_total":       {group: groupNet, label: "device", quantity: "receivePackets"},
	"node_network_transmit_packets_total":      {group: groupNet, label: "device", quantity: "transmitPackets"},
	"node_network_receive_drop_total":          {group: groupNet, label: "device", quantity: "receiveDrops"},
	"node_network_transmit_drop_total":         {group: groupNet, label: "device", quantity: "transmitDrops"},
	"node_network_receive_errs_total":          {group: groupNet, label: "device", quantity: "receiveErrors"},
	"node_network_transmit_errs_total":         {group: groupNet, label: "device", quantity: "transmitErrors"},
}

// Key of a reading: group, member and quantity ("disk/sda/reads",
// "cpu/3/user", "memory//total").
func Key(group, member, quantity string) string { return group + "/" + member + "/" + quantity }

func keep(rd *dbstats.Reading, mf *dto.MetricFamily) {
	name := mf.GetName()
	switch name {
	case "node_boot_time_seconds":
		for _, m := range mf.GetMetric() {
			// The boot time names the host's life: a reboot changes it.
			rd.Epoch = strconv.FormatInt(int64(value(m)), 10)
		}
		return
	case "node_cpu_seconds_total":
		for _, m := range mf.GetMetric() {
			rd.Counters[Key(groupCPU, label(m, "cpu"), label(m, "mode"))] = value(m)
		}
		return
	}
	f, ok := families[name]
	if !ok {
		return
	}
	for _, m := range mf.GetMetric() {
		k := Key(f.group, label(m, f.label), f.quantity)
		if f.gauge {
			rd.Gauges[k] = value(m)
		} else {
			rd.Counters[k] = value(m)
		}
	}
}

func label(m *dto.Metric, name string) string {
	if name == "" {
		return ""
	}
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	default:
		return m.GetUntyped().GetValue()
	}
}
