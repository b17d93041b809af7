package dbstats

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// redisCounters are INFO's counters the figures read; used_cpu is their
// sum of used_cpu_user and used_cpu_sys.
var redisCounters = []string{"total_commands_processed", "evicted_keys", "expired_keys", "keyspace_hits", "keyspace_misses",
	"total_net_input_bytes", "total_net_output_bytes", "used_cpu_user", "used_cpu_sys"}

var redisGauges = []string{"connected_clients", "blocked_clients", "used_memory"}

// Redis polls INFO of a Redis or Valkey server: the server's own account
// of its CPU, which is the only one a managed endpoint gives.
type Redis struct {
	client  *redis.Client
	secrets []string
}

// NewRedis connects to c.Host:c.Port with c's credentials (a password
// alone is the default user's) and checks that INFO answers.
func NewRedis(ctx context.Context, c Config) (*Redis, error) {
	r := &Redis{secrets: []string{c.Username, c.Password}, client: RedisClient(c, "dbperf-dbstats")}
	if _, err := r.Poll(ctx); err != nil {
		_ = r.client.Close()
		return nil, err
	}
	return r, nil
}

// RedisClient is the client of one connection to c.Host:c.Port with c's
// credentials (a password alone is the default user's), named name on the
// server (CLIENT LIST): one attempt per call — a failed poll is a warning,
// and the next one tries again.
func RedisClient(c Config, name string) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr: net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), Username: c.Username, Password: c.Password, DB: 0,
		TLSConfig: c.TLS, ClientName: name, Protocol: 2, DisableIdentity: true, PoolSize: 1, MaxRetries: -1,
	})
}

// Source names the statistics.
func (r *Redis) Source() string { return SourceRedis }

// SourceRedis names the statistics of Redis and Valkey (INFO).
const SourceRedis = "redis"

// Poll runs INFO (its default sections, which every version and Valkey
// accept).
func (r *Redis) Poll(ctx context.Context) (Reading, error) {
	text, err := r.client.Info(ctx).Result()
	if err != nil {
		return Reading{}, redact(fmt.Sprintf("reading INFO of %s", r.client.Options().Addr), err, r.secrets...)
	}
	return parseRedisInfo(text)
}

// parseRedisInfo reads INFO's "key:value" lines. The poller's own
// connection is taken off connected_clients.
func parseRedisInfo(text string) (Reading, error) {
	fields := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && !strings.HasPrefix(k, "#") {
			fields[k] = v
		}
	}
	r := Reading{Epoch: fields["run_id"], Counters: map[string]float64{}, Gauges: map[string]float64{}}
	read := func(into map[string]float64, keys []string) error {
		for _, k := range keys {
			v, err := strconv.ParseFloat(fields[k], 64)
			if err != nil {
				return fmt.Errorf("INFO field %s: %q is not a number", k, fields[k])
			}
			into[k] = v
		}
		return nil
	}
	if err := read(r.Counters, redisCounters); err != nil {
		return Reading{}, err
	}
	if err := read(r.Gauges, redisGauges); err != nil {
		return Reading{}, err
	}
	r.Counters["used_cpu"] = r.Counters["used_cpu_user"] + r.Counters["used_cpu_sys"]
	r.Gauges["connected_clients"] = max(r.Gauges["connected_clients"]-1, 0)
	return r, nil
}

// Figures of Redis. INFO is one command per poll, the poller's own.
func (r *Redis) Figures() []Def {
	return []Def{
		{Name: "serverCPUCores", Kind: PerSecond, Key: "used_cpu", Unit: "cores"},
		{Name: "serverCPUUserCores", Kind: PerSecond, Key: "used_cpu_user", Unit: "cores"},
		{Name: "serverCPUSystemCores", Kind: PerSecond, Key: "used_cpu_sys", Unit: "cores"},
		{Name: "commandsPerSecond", Kind: PerSecond, Key: "total_commands_processed", Unit: "ops/s", OwnPerPoll: 1},
		{Name: "connectedClients", Kind: Gauge, Key: "connected_clients", Unit: "clients"},
		{Name: "blockedClients", Kind: Gauge, Key: "blocked_clients", Unit: "clients"},
		{Name: "usedMemoryBytes", Kind: Gauge, Key: "used_memory", Unit: "bytes"},
		{Name: "evictedKeys", Kind: Count, Key: "evicted_keys", Unit: "count", Direction: results.LowerIsBetter},
		{Name: "expiredKeysPerSecond", Kind: PerSecond, Key: "expired_keys", Unit: "keys/s"},
		{Name: "keyspaceHitPercent", Kind: Percent, Key: "keyspace_hits", Other: "keyspace_misses", Unit: "%"},
		{Name: "networkInputBytesPerSecond", Kind: PerSecond, Key: "total_net_input_bytes", Unit: "bytes/s"},
		{Name: "networkOutputBytesPerSecond", Kind: PerSecond, Key: "total_net_output_bytes", Unit: "bytes/s"},
	}
}

// Close ends the connection.
func (r *Redis) Close() error { return r.client.Close() }
