package diagnose

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
)

// Redis reads INFO commandstats of a Valkey or Redis server: each
// command's calls and the microseconds the server spent in it (its own
// INFO calls left out), the failed and rejected calls, and the latency
// percentiles of its calls in the window (LATENCY HISTOGRAM).
type Redis struct {
	client  *redis.Client
	secrets []string
	// noHistogram: the server has no LATENCY HISTOGRAM (said in notes).
	noHistogram bool
	notes       []string
}

// NewRedis connects as the statistics poller does, named
// dbperf-diagnostics.
func NewRedis(ctx context.Context, c dbstats.Config) (*Redis, error) {
	r := &Redis{secrets: []string{c.Username, c.Password}}
	r.client = dbstats.RedisClient(c, "dbperf-diagnostics")
	if _, err := r.Snapshot(ctx); err != nil {
		_ = r.client.Close()
		return nil, err
	}
	return r, nil
}

// Name is the statistics' source.
func (r *Redis) Name() string { return dbstats.SourceRedis }

// TransactionsFrom says what the transactions count.
func (r *Redis) TransactionsFrom() string {
	return "INFO commandstats calls (the runner's own INFO and LATENCY HISTOGRAM left out)"
}

// Snapshot reads INFO commandstats, and each command's latency histogram
// (LATENCY HISTOGRAM, Redis 7 and Valkey) where the server has one: each
// bucket's own count becomes a figure "usecLE<bucket>", which the window
// subtracts like any counter and Finish turns into percentiles.
func (r *Redis) Snapshot(ctx context.Context) (Snapshot, error) {
	text, err := r.client.Info(ctx, "commandstats").Result()
	if err != nil {
		return Snapshot{}, fmt.Errorf("reading INFO commandstats of %s: %w", r.client.Options().Addr, dbstats.RedactSecrets(err, r.secrets...))
	}
	s := parseCommandStats(text)
	s.At = time.Now()
	if !r.noHistogram {
		reply, err := r.client.Do(ctx, "LATENCY", "HISTOGRAM").Slice()
		if err != nil {
			r.noHistogram = true // an older server, or LATENCY renamed: said once
			r.notes = append(r.notes, fmt.Sprintf("no per-command latency histograms (LATENCY HISTOGRAM: %v)", dbstats.RedactSecrets(err, r.secrets...)))
		} else {
			addHistograms(s, reply)
		}
	}
	return s, nil
}

// addHistograms reads LATENCY HISTOGRAM's reply — command name, then
// ["calls", n, "histogram_usec", [bucket, cumulative count, ...]] — into
// the commands' figures.
func addHistograms(s Snapshot, reply []any) {
	for i := 0; i+1 < len(reply); i += 2 {
		name, _ := reply[i].(string)
		fields, _ := reply[i+1].([]any)
		c, ok := s.Items[name]
		if !ok {
			continue
		}
		for j := 0; j+1 < len(fields); j += 2 {
			if k, _ := fields[j].(string); k != "histogram_usec" {
				continue
			}
			buckets, _ := fields[j+1].([]any)
			type bucket struct{ le, cum int64 }
			var bs []bucket
			for b := 0; b+1 < len(buckets); b += 2 {
				le, ok1 := buckets[b].(int64)
				n, ok2 := buckets[b+1].(int64)
				if ok1 && ok2 {
					bs = append(bs, bucket{le, n})
				}
			}
			// The counts are cumulative and only the buckets that hold
			// calls are listed: a bucket missing from one snapshot and
			// present in the next is not new calls. Each bucket's own
			// count (its cumulative less the listed one below it) is a
			// counter the window can subtract, a missing one 0.
			sort.Slice(bs, func(a, b int) bool { return bs[a].le < bs[b].le })
			var below int64
			for _, b := range bs {
				c.Figures[histogramPrefix+strconv.FormatInt(b.le, 10)] = float64(b.cum - below)
				below = b.cum
			}
		}
		s.Items[name] = c
	}
}

// ownHistogram is the command the diagnostics read the histograms with,
// left out of the commands as INFO is.
const ownHistogram = "latency|histogram"

// histogramPrefix names a latency bucket's count among a command's
// figures: "usecLE1024" is the calls that took at most 1,024 µs and more
// than the bucket below.
const histogramPrefix = "usecLE"

// Finish turns each command's latency buckets over the window into its
// median, 99th and 99.9th percentiles (p50Micros, p99Micros, p999Micros:
// the upper bound of the power-of-two bucket the percentile falls in —
// the histogram's resolution) and drops the buckets.
func (r *Redis) Finish(d *results.Diagnostics) {
	for i := range d.Items {
		it := &d.Items[i]
		type bucket struct{ le, n float64 }
		var bs []bucket
		for k, v := range it.Figures {
			if le, ok := strings.CutPrefix(k, histogramPrefix); ok {
				if f, err := strconv.ParseFloat(le, 64); err == nil {
					bs = append(bs, bucket{f, v})
				}
				delete(it.Figures, k)
			}
		}
		if len(bs) == 0 {
			continue
		}
		sort.Slice(bs, func(a, b int) bool { return bs[a].le < bs[b].le })
		var total float64
		for _, b := range bs {
			total += b.n
		}
		if total <= 0 {
			continue
		}
		for _, q := range []struct {
			name string
			p    float64
		}{{"p50Micros", 0.5}, {"p99Micros", 0.99}, {"p999Micros", 0.999}} {
			var cum float64
			for _, b := range bs {
				if cum += b.n; cum >= q.p*total {
					it.Figures[q.name] = b.le
					break
				}
			}
		}
	}
}

// Notes say what the server could not give.
func (r *Redis) Notes() []string { return r.notes }

// parseCommandStats reads "cmdstat_get:calls=10,usec=20,usec_per_call=2.00,
// rejected_calls=0,failed_calls=0" lines (Redis 6.2+ and Valkey; older
// servers lack the last two). A subcommand's line (cmdstat_config|get)
// names it "config|get".
func parseCommandStats(text string) Snapshot {
	s := Snapshot{Items: map[string]Counters{}}
	for _, line := range strings.Split(text, "\n") {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		name = strings.TrimPrefix(name, "cmdstat_")
		if name == "info" || name == ownHistogram {
			continue // the diagnostics' own
		}
		c := Counters{Kind: results.DiagnosticCommand, Figures: map[string]float64{}}
		for _, kv := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			switch k {
			case "calls":
				c.Calls = f
			case "usec":
				c.TimeMillis = f / 1000
			case "rejected_calls":
				c.Figures["rejectedCalls"] = f
			case "failed_calls":
				c.Figures["failedCalls"] = f
			}
		}
		s.Items[name] = c
		s.Transactions += c.Calls
	}
	return s
}

// Close closes the connection.
func (r *Redis) Close() error { return r.client.Close() }
