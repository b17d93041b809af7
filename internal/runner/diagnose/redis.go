package diagnose

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
)

// Redis reads INFO commandstats of a Valkey or Redis server: each
// command's calls and the microseconds the server spent in it (its own
// INFO calls left out), and the failed and rejected calls.
type Redis struct {
	client  *redis.Client
	secrets []string
}

// NewRedis connects as the statistics poller does, named
// dbperf-diagnostics.
func NewRedis(ctx context.Context, c dbstats.Config) (*Redis, error) {
	r := &Redis{secrets: []string{c.Username, c.Password}}
	r.client = redis.NewClient(&redis.Options{
		Addr: net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), Username: c.Username, Password: c.Password,
		TLSConfig: c.TLS, ClientName: "dbperf-diagnostics", Protocol: 2, DisableIdentity: true, PoolSize: 1, MaxRetries: -1,
	})
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
	return "INFO commandstats calls (the runner's own INFO left out)"
}

// Snapshot reads INFO commandstats.
func (r *Redis) Snapshot(ctx context.Context) (Snapshot, error) {
	text, err := r.client.Info(ctx, "commandstats").Result()
	if err != nil {
		return Snapshot{}, fmt.Errorf("reading INFO commandstats of %s: %w", r.client.Options().Addr, redactErr(err, r.secrets...))
	}
	s := parseCommandStats(text)
	s.At = time.Now()
	return s, nil
}

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
		if name == "info" {
			continue
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
