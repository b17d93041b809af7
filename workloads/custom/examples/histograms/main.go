// Command histograms is an example of a custom dbperf workload (see
// docs/workloads/custom.md): a small load generator for a Redis-compatible
// server that times every request and prints, per operation, the
// HdrHistogram of its latencies in the line format dbperf-lines v1 — or,
// with -format openmetrics, Prometheus histograms in the OpenMetrics text
// format. dbperf merges the histograms of parallel load generators into
// true percentiles.
//
// It reads the target as every custom tool does: DBPERF_TARGET_HOST,
// DBPERF_TARGET_PORT, DBPERF_TARGET_USERNAME, DBPERF_TARGET_PASSWORD,
// DBPERF_TARGET_TLS (with DBPERF_TARGET_CA_FILE, DBPERF_TARGET_CERT_FILE,
// DBPERF_TARGET_KEY_FILE, DBPERF_TARGET_SERVER_NAME), and
// DBPERF_DURATION_SECONDS for how long to run. Its results go to stdout, or
// to the file DBPERF_RESULT_FILE names.
//
//	histograms -clients 8 [-requests 10000 | -duration 30s] [-keys 10000] [-format lines|openmetrics]
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/redis/go-redis/v9"
)

// The operations, each with its histogram of latencies in microseconds
// (1 µs to 1 minute, 3 significant digits).
var operations = []string{"SET", "GET"}

func newHistogram() *hdr.Histogram { return hdr.New(1, 60_000_000, 3) }

func main() {
	clients := flag.Int("clients", 4, "concurrent connections, each sending one request at a time")
	requests := flag.Int("requests", 0, "requests per client (SET and GET alternating); 0: run for -duration")
	duration := flag.Duration("duration", envDuration(), "how long to run when -requests is 0 (default: DBPERF_DURATION_SECONDS, else 10s)")
	keys := flag.Int("keys", 10000, "size of the key space")
	format := flag.String("format", "lines", "results format: lines (dbperf-lines v1) or openmetrics")
	flag.Parse()
	if *format != "lines" && *format != "openmetrics" {
		fatal(fmt.Errorf("-format %q: want lines or openmetrics", *format))
	}
	opts, err := redisOptions(*clients)
	if err != nil {
		fatal(err)
	}
	client := redis.NewClient(opts)
	defer client.Close()
	if err := client.Ping(context.Background()).Err(); err != nil {
		fatal(fmt.Errorf("cannot reach the target: %w", err))
	}
	var prom *promMetrics
	if *format == "openmetrics" {
		prom = newPromMetrics()
	}
	res := run(client, *clients, *requests, *duration, *keys, prom)
	out := io.Writer(os.Stdout)
	if path := os.Getenv("DBPERF_RESULT_FILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fatal(err)
		}
		defer f.Close()
		out = f
	}
	if *format == "lines" {
		err = res.writeLines(out, *clients)
	} else {
		err = prom.write(out, res)
	}
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "histograms:", err)
	os.Exit(1)
}

func envDuration() time.Duration {
	if s, err := strconv.Atoi(os.Getenv("DBPERF_DURATION_SECONDS")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 10 * time.Second
}

// redisOptions reaches the target the way the operator describes it.
func redisOptions(clients int) (*redis.Options, error) {
	host, port := os.Getenv("DBPERF_TARGET_HOST"), os.Getenv("DBPERF_TARGET_PORT")
	if host == "" || port == "" {
		return nil, errors.New("DBPERF_TARGET_HOST and DBPERF_TARGET_PORT must be set")
	}
	opts := &redis.Options{
		Addr:     net.JoinHostPort(host, port),
		Username: os.Getenv("DBPERF_TARGET_USERNAME"),
		Password: os.Getenv("DBPERF_TARGET_PASSWORD"),
		PoolSize: clients, MinIdleConns: clients,
		// A measurement never retries: a retried request's latency is two.
		MaxRetries: -1,
	}
	if os.Getenv("DBPERF_TARGET_TLS") == "true" {
		cfg := &tls.Config{ServerName: os.Getenv("DBPERF_TARGET_SERVER_NAME"), MinVersion: tls.VersionTLS12}
		if ca := os.Getenv("DBPERF_TARGET_CA_FILE"); ca != "" {
			pem, err := os.ReadFile(ca)
			if err != nil {
				return nil, err
			}
			cfg.RootCAs = x509.NewCertPool()
			cfg.RootCAs.AppendCertsFromPEM(pem)
		}
		if cert := os.Getenv("DBPERF_TARGET_CERT_FILE"); cert != "" {
			pair, err := tls.LoadX509KeyPair(cert, os.Getenv("DBPERF_TARGET_KEY_FILE"))
			if err != nil {
				return nil, err
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		opts.TLSConfig = cfg
	}
	return opts, nil
}

// result is what the clients measured together.
type result struct {
	hists   map[string]*hdr.Histogram
	errors  map[string]int64
	elapsed time.Duration
	// perSecond counts the requests completed in each second of the run.
	perSecond []int64
}

func run(client *redis.Client, clients, requests int, duration time.Duration, keys int, prom *promMetrics) *result {
	res := &result{hists: map[string]*hdr.Histogram{}, errors: map[string]int64{}}
	for _, op := range operations {
		res.hists[op] = newHistogram()
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		seconds  = make([]atomic.Int64, 3600)
		start    = time.Now()
		deadline = start.Add(duration)
	)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := map[string]*hdr.Histogram{}
			errs := map[string]int64{}
			for _, op := range operations {
				own[op] = newHistogram()
			}
			ctx := context.Background()
			for i := 0; requests > 0 && i < requests || requests == 0 && time.Now().Before(deadline); i++ {
				op := operations[i%len(operations)]
				key := "dbperf:" + strconv.Itoa((c*7919+i/2)%keys)
				t0 := time.Now()
				var err error
				if op == "SET" {
					err = client.Set(ctx, key, "value-"+strconv.Itoa(i), 0).Err()
				} else {
					err = client.Get(ctx, key).Err()
					if errors.Is(err, redis.Nil) {
						err = nil // a miss is an answer
					}
				}
				done := time.Now()
				if err != nil {
					errs[op]++
					continue
				}
				_ = own[op].RecordValue(max(done.Sub(t0).Microseconds(), 1))
				if prom != nil {
					prom.latency.WithLabelValues(op).Observe(done.Sub(t0).Seconds())
				}
				if s := int(done.Sub(start) / time.Second); s < len(seconds) {
					seconds[s].Add(1)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for op, h := range own {
				res.hists[op].Merge(h)
				res.errors[op] += errs[op]
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	for s := 0; s < len(seconds) && time.Duration(s+1)*time.Second <= res.elapsed; s++ {
		res.perSecond = append(res.perSecond, seconds[s].Load())
	}
	return res
}

func (r *result) total() (done, failed int64) {
	for _, op := range operations {
		done += r.hists[op].TotalCount()
		failed += r.errors[op]
	}
	return done, failed
}

// writeLines prints dbperf-lines v1: the header, then one record a line.
func (r *result) writeLines(w io.Writer, clients int) error {
	done, failed := r.total()
	lines := []string{
		"# dbperf-lines v1",
		"tool dbperf-example-histograms 1",
		fmt.Sprintf("param clients %d", clients),
		fmt.Sprintf("metric opsPerSecond - %.3f ops/s HigherIsBetter", float64(done)/r.elapsed.Seconds()),
		fmt.Sprintf("metric errorPercent - %.4f %% LowerIsBetter", percent(failed, done+failed)),
	}
	for _, op := range operations {
		h := r.hists[op]
		// The compressed V2 encoding in base64 ("HISTFAAA…"), as
		// HdrHistogram's own logs hold it.
		enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			return err
		}
		lines = append(lines,
			fmt.Sprintf("metric requests %s %d count Neutral", op, h.TotalCount()+r.errors[op]),
			fmt.Sprintf("metric errorPercent %s %.4f %% LowerIsBetter", op, percent(r.errors[op], h.TotalCount()+r.errors[op])),
			fmt.Sprintf("histogram %s us %s", op, enc))
	}
	for s, n := range r.perSecond {
		lines = append(lines, fmt.Sprintf("progress %d opsPerSecond %d", s+1, n))
	}
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

func percent(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

// promMetrics are the same measurement as Prometheus metrics, kept with
// the Prometheus client library: a histogram of request durations in
// seconds (its buckets are what dbperf reads percentiles from), counters
// of requests and errors, and the throughput as a gauge.
type promMetrics struct {
	reg                *prometheus.Registry
	latency            *prometheus.HistogramVec
	requests, failures *prometheus.CounterVec
	throughput         prometheus.Gauge
}

func newPromMetrics() *promMetrics {
	p := &promMetrics{
		reg: prometheus.NewRegistry(),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "request_duration_seconds", Help: "Latency of the requests that succeeded.",
			// 10 µs to about 3 s, 10 % apart.
			Buckets: prometheus.ExponentialBuckets(0.00001, 1.1, 133),
		}, []string{"operation"}),
		requests:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "requests_total", Help: "Requests sent."}, []string{"operation"}),
		failures:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "errors_total", Help: "Requests that failed."}, []string{"operation"}),
		throughput: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ops_per_second", Help: "Requests that succeeded per second."}),
	}
	p.reg.MustRegister(p.latency, p.requests, p.failures, p.throughput)
	return p
}

// write prints the metrics in the OpenMetrics text format, # EOF last.
func (p *promMetrics) write(w io.Writer, r *result) error {
	done, _ := r.total()
	p.throughput.Set(float64(done) / r.elapsed.Seconds())
	for _, op := range operations {
		p.requests.WithLabelValues(op).Add(float64(r.hists[op].TotalCount() + r.errors[op]))
		p.failures.WithLabelValues(op).Add(float64(r.errors[op]))
	}
	families, err := p.reg.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeOpenMetrics))
	for _, mf := range families {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	_, err = expfmt.FinalizeOpenMetrics(w)
	return err
}
