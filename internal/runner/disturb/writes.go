package disturb

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
)

// LedgerTable is the ledger's table (a key prefix on Valkey).
const LedgerTable = "dbperf_ledger"

// Ledger writes numbered rows through the target's endpoint, one every
// Interval (20 ms by default), from a connection it opens again when it is
// lost: a failover's new primary behind the same Service name.
type Ledger struct {
	Name     string
	Protocol pod.Protocol
	Config   dbstats.Config
	Interval time.Duration
}

// LedgerReport is the ledger's check.
type LedgerReport struct {
	// Acknowledged writes (the server returned success) and Failed ones.
	Acknowledged, Failed int
	// Missing are acknowledged writes not found afterwards (at most 100
	// listed); MissingCount counts them all.
	Missing      []string
	MissingCount int
	// FirstFailure and LastFailure bound the failed writes; Reconnected
	// is when a write succeeded again after them.
	FirstFailure, LastFailure, Reconnected time.Time
	Warnings                               []string
}

// LedgerRun is a ledger writing.
type LedgerRun struct {
	l     Ledger
	run   string
	w     writer
	done  chan struct{}
	mu    sync.Mutex
	acked []int64
	rep   LedgerReport
	log   io.Writer
}

// writer is the ledger's connection to one kind of server.
type writer interface {
	connect(ctx context.Context) error
	write(ctx context.Context, run string, id int64) error
	// present lists which of ids the server has.
	present(ctx context.Context, run string, ids []int64) (map[int64]bool, error)
	drop(ctx context.Context, run string) error
	close()
}

// StartLedger writes from from to to (or ctx's end) in the background.
func StartLedger(ctx context.Context, l Ledger, from, to time.Time, log io.Writer) *LedgerRun {
	if l.Interval <= 0 {
		l.Interval = 20 * time.Millisecond
	}
	lr := &LedgerRun{l: l, run: token(8), done: make(chan struct{}), log: log}
	switch l.Protocol {
	case pod.ProtocolPostgres:
		lr.w = &pgWriter{l: l}
	case pod.ProtocolMySQL:
		lr.w = &mysqlWriter{l: l}
	case pod.ProtocolRedis:
		lr.w = &redisWriter{l: l}
	default:
		lr.rep.Warnings = append(lr.rep.Warnings, fmt.Sprintf("no write ledger on a %q target", l.Protocol))
		close(lr.done)
		return lr
	}
	go lr.write(ctx, from, to)
	return lr
}

func (lr *LedgerRun) say(format string, args ...any) {
	fmt.Fprintf(lr.log, "[dbperf-runner] disturbance %s: write ledger: %s\n", lr.l.Name, redact(fmt.Sprintf(format, args...), lr.l.Config))
}

// write is the writer's loop.
func (lr *LedgerRun) write(ctx context.Context, from, to time.Time) {
	defer close(lr.done)
	select {
	case <-time.After(time.Until(from)):
	case <-ctx.Done():
		return
	}
	wctx, cancel := context.WithDeadline(ctx, to)
	defer cancel()
	connected, lastTry := false, time.Time{}
	tick := time.NewTicker(lr.l.Interval)
	defer tick.Stop()
	var id int64
	lr.say("writing every %s", lr.l.Interval)
	for wctx.Err() == nil {
		select {
		case <-tick.C:
		case <-wctx.Done():
			continue
		}
		if !connected {
			if time.Since(lastTry) < time.Second {
				continue
			}
			lastTry = time.Now()
			cctx, ccancel := context.WithTimeout(wctx, 2*time.Second)
			err := lr.w.connect(cctx)
			ccancel()
			if err != nil {
				lr.fail(time.Now())
				continue
			}
			connected = true
		}
		id++
		octx, ocancel := context.WithTimeout(wctx, 2*time.Second)
		err := lr.w.write(octx, lr.run, id)
		ocancel()
		now := time.Now()
		if err != nil {
			if wctx.Err() != nil {
				return // the end, not a failure: not counted
			}
			lr.fail(now)
			lr.w.close()
			connected = false
			continue
		}
		lr.mu.Lock()
		lr.acked = append(lr.acked, id)
		if !lr.rep.LastFailure.IsZero() && lr.rep.Reconnected.Before(lr.rep.LastFailure) {
			lr.rep.Reconnected = now
		}
		lr.mu.Unlock()
	}
}

func (lr *LedgerRun) fail(at time.Time) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.rep.Failed++
	if lr.rep.FirstFailure.IsZero() {
		lr.rep.FirstFailure = at
	}
	lr.rep.LastFailure = at
}

// Check waits for the writer to end, reads every acknowledged write back
// and names those missing, then drops the ledger's rows.
func (lr *LedgerRun) Check(ctx context.Context) LedgerReport {
	<-lr.done
	lr.mu.Lock()
	rep, acked := lr.rep, slices.Clone(lr.acked)
	lr.mu.Unlock()
	rep.Acknowledged = len(acked)
	if lr.w == nil || len(acked) == 0 {
		if lr.w != nil && rep.Failed > 0 {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("no write was acknowledged (%d failed)", rep.Failed))
		}
		return rep
	}
	lr.w.close()
	var have map[int64]bool
	var err error
	for try := 0; try < 10 && ctx.Err() == nil; try++ { // the server may still be failing over
		if err = lr.w.connect(ctx); err == nil {
			if have, err = lr.w.present(ctx, lr.run, acked); err == nil {
				break
			}
			lr.w.close()
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
		}
	}
	if err != nil || have == nil {
		rep.Warnings = append(rep.Warnings, "the writes could not be read back: "+redact(fmt.Sprint(err), lr.l.Config))
		return rep
	}
	for _, id := range acked {
		if !have[id] {
			rep.MissingCount++
			if len(rep.Missing) < 100 {
				rep.Missing = append(rep.Missing, strconv.FormatInt(id, 10))
			}
		}
	}
	if err := lr.w.drop(ctx, lr.run); err != nil {
		rep.Warnings = append(rep.Warnings, "the ledger's rows could not be removed: "+redact(err.Error(), lr.l.Config))
	}
	lr.w.close()
	lr.say("%d writes acknowledged, %d failed, %d missing", rep.Acknowledged, rep.Failed, rep.MissingCount)
	return rep
}

type pgWriter struct {
	l    Ledger
	conn *pgx.Conn
}

func (w *pgWriter) connect(ctx context.Context) error {
	cfg, err := SQLLoad{Name: w.l.Name + "-ledger", Config: w.l.Config}.pgConfig()
	if err != nil {
		return err
	}
	if w.conn, err = pgx.ConnectConfig(ctx, cfg); err != nil {
		return err
	}
	_, err = w.conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+LedgerTable+` (run text, id bigint, at timestamptz, PRIMARY KEY (run, id))`)
	return err
}

func (w *pgWriter) write(ctx context.Context, run string, id int64) error {
	_, err := w.conn.Exec(ctx, `INSERT INTO `+LedgerTable+` (run, id, at) VALUES ($1, $2, now())`, run, id)
	return err
}

func (w *pgWriter) present(ctx context.Context, run string, _ []int64) (map[int64]bool, error) {
	rows, err := w.conn.Query(ctx, `SELECT id FROM `+LedgerTable+` WHERE run = $1`, run)
	if err != nil {
		return nil, err
	}
	have := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		have[id] = true
	}
	return have, rows.Err()
}

func (w *pgWriter) drop(ctx context.Context, run string) error {
	_, err := w.conn.Exec(ctx, `DELETE FROM `+LedgerTable+` WHERE run = $1`, run)
	return err
}

func (w *pgWriter) close() {
	if w.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = w.conn.Close(ctx)
		w.conn = nil
	}
}

type mysqlWriter struct {
	l  Ledger
	db *sql.DB
}

func (w *mysqlWriter) connect(ctx context.Context) error {
	db, err := SQLLoad{Name: w.l.Name + "-ledger", Config: w.l.Config}.mysqlDB()
	if err != nil {
		return err
	}
	w.db = db
	_, err = db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+LedgerTable+` (run varchar(32), id bigint, at timestamp(6), PRIMARY KEY (run, id)) ENGINE=InnoDB`)
	return err
}

func (w *mysqlWriter) write(ctx context.Context, run string, id int64) error {
	_, err := w.db.ExecContext(ctx, `INSERT INTO `+LedgerTable+` (run, id, at) VALUES (?, ?, NOW(6))`, run, id)
	return err
}

func (w *mysqlWriter) present(ctx context.Context, run string, _ []int64) (map[int64]bool, error) {
	rows, err := w.db.QueryContext(ctx, `SELECT id FROM `+LedgerTable+` WHERE run = ?`, run)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		have[id] = true
	}
	return have, rows.Err()
}

func (w *mysqlWriter) drop(ctx context.Context, run string) error {
	_, err := w.db.ExecContext(ctx, `DELETE FROM `+LedgerTable+` WHERE run = ?`, run)
	return err
}

func (w *mysqlWriter) close() {
	if w.db != nil {
		_ = w.db.Close()
		w.db = nil
	}
}

type redisWriter struct {
	l Ledger
	c *redis.Client
}

func (w *redisWriter) connect(ctx context.Context) error {
	c := w.l.Config
	w.c = redis.NewClient(&redis.Options{Addr: net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), Username: c.Username, Password: c.Password,
		TLSConfig: c.TLS, ClientName: "dbperf-ledger", Protocol: 2, DisableIdentity: true, PoolSize: 1, MaxRetries: -1})
	return w.c.Ping(ctx).Err()
}

func (w *redisWriter) key(run string, id int64) string {
	return LedgerTable + ":" + run + ":" + strconv.FormatInt(id, 10)
}

func (w *redisWriter) write(ctx context.Context, run string, id int64) error {
	return w.c.Set(ctx, w.key(run, id), time.Now().UnixNano(), 0).Err()
}

func (w *redisWriter) present(ctx context.Context, run string, ids []int64) (map[int64]bool, error) {
	have := map[int64]bool{}
	for start := 0; start < len(ids); start += 500 {
		batch := ids[start:min(start+500, len(ids))]
		keys := make([]string, len(batch))
		for i, id := range batch {
			keys[i] = w.key(run, id)
		}
		vals, err := w.c.MGet(ctx, keys...).Result()
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			if v != nil {
				have[batch[i]] = true
			}
		}
	}
	return have, nil
}

func (w *redisWriter) drop(ctx context.Context, run string) error {
	iter := w.c.Scan(ctx, 0, LedgerTable+":"+run+":*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	for start := 0; start < len(keys); start += 500 {
		if err := w.c.Del(ctx, keys[start:min(start+500, len(keys))]...).Err(); err != nil {
			return err
		}
	}
	return nil
}

func (w *redisWriter) close() {
	if w.c != nil {
		_ = w.c.Close()
		w.c = nil
	}
}
