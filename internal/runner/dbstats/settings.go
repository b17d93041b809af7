package dbstats

import (
	"context"
	"fmt"
	"strings"
)

// SettingsReader is a Poller that can read the server's settings: what a
// comparison's environment diff shows when two variants' servers were set
// up differently.
type SettingsReader interface {
	// Settings returns the settings that differ from the server's built-in
	// defaults, by name, each with its unit.
	Settings(ctx context.Context) (map[string]string, error)
}

// maxSettings bounds the settings a result keeps.
const maxSettings = 400

// Settings: PostgreSQL's pg_settings whose source is not the built-in
// default (the configuration file, the command line, ALTER SYSTEM,
// CloudNativePG's parameters, the database's or role's settings), with
// their units; the client's own session settings left out.
func (p *Postgres) Settings(ctx context.Context) (map[string]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil || p.conn.IsClosed() {
		if err := p.connect(ctx); err != nil {
			return nil, err
		}
	}
	rows, err := p.conn.Query(ctx, `SELECT name, setting || coalesce(' ' || unit, '') FROM pg_settings
		WHERE source NOT IN ('default', 'client', 'session', 'override') ORDER BY name LIMIT $1`, maxSettings+len(secretSettings))
	if err != nil {
		return nil, redact("reading pg_settings", err, p.secrets...)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, fmt.Errorf("reading pg_settings: %w", err)
		}
		if !secretSetting(name, value) && !identitySettings[name] && len(out) < maxSettings {
			out[name] = value
		}
	}
	return out, rows.Err()
}

// identitySettings say where a server is, not how it runs: they differ
// between any two servers and would fill every diff.
var identitySettings = map[string]bool{"port": true, "listen_addresses": true, "unix_socket_directories": true, "data_directory": true,
	"hba_file": true, "ident_file": true, "config_file": true, "cluster_name": true}

// secretSettings are parts of the names of settings that can hold a
// credential (a standby's primary_conninfo has the replication password;
// an archive_command a cloud key): never read into a result.
var secretSettings = []string{"conninfo", "password", "passphrase", "_command", "key", "secret", "token"}

// secretSetting says whether a setting may hold a credential, by its name
// or by what its value looks like.
func secretSetting(name, value string) bool {
	n, v := strings.ToLower(name), strings.ToLower(value)
	for _, s := range secretSettings {
		if strings.Contains(n, s) {
			return true
		}
	}
	return strings.Contains(v, "password=") || strings.Contains(v, "secret")
}

// Settings: MySQL's and MariaDB's global variables not at their compiled-in
// default — MariaDB's information_schema.SYSTEM_VARIABLES by
// GLOBAL_VALUE_ORIGIN, MySQL 8's performance_schema.variables_info by
// VARIABLE_SOURCE (the one a server lacks is the other's).
func (m *MySQL) Settings(ctx context.Context) (map[string]string, error) {
	queries := []string{
		`SELECT LOWER(VARIABLE_NAME), COALESCE(GLOBAL_VALUE, '') FROM information_schema.SYSTEM_VARIABLES
		 WHERE GLOBAL_VALUE_ORIGIN <> 'COMPILE-TIME' AND GLOBAL_VALUE IS NOT NULL ORDER BY 1`,
		`SELECT LOWER(i.VARIABLE_NAME), COALESCE(g.VARIABLE_VALUE, '') FROM performance_schema.variables_info i
		 JOIN performance_schema.global_variables g ON g.VARIABLE_NAME = i.VARIABLE_NAME
		 WHERE i.VARIABLE_SOURCE <> 'COMPILED' ORDER BY 1`,
	}
	var firstErr error
	for _, q := range queries {
		rows, err := m.db.QueryContext(ctx, q)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		out, err := readSettings(rows.Next, rows.Scan, rows.Err, rows.Close)
		if err != nil {
			return nil, redact("reading the global variables", err, m.secrets...)
		}
		return out, nil
	}
	return nil, redact("reading the global variables", firstErr, m.secrets...)
}

// Settings: a Valkey or Redis server's CONFIG GET * (it has no record of
// its defaults: every parameter, so that two variants' diff shows what
// differs); a server that refuses CONFIG (a managed endpoint renames it)
// has none.
func (r *Redis) Settings(ctx context.Context) (map[string]string, error) {
	all, err := r.client.ConfigGet(ctx, "*").Result()
	if err != nil {
		return nil, redact("reading CONFIG GET *", err, r.secrets...)
	}
	out := map[string]string{}
	for name, value := range all {
		if !secretSetting(name, value) && !strings.Contains(name, "pass") && !strings.Contains(name, "auth") && !keyValueIdentity[name] && len(out) < maxSettings {
			out[name] = value
		}
	}
	return out, nil
}

// keyValueIdentity are a key-value server's parameters that say where it
// is, not how it runs.
var keyValueIdentity = map[string]bool{"port": true, "bind": true, "dir": true, "pidfile": true, "logfile": true, "unixsocket": true,
	"dbfilename": true, "appenddirname": true, "appendfilename": true, "tls-port": true, "cluster-config-file": true, "cluster-announce-ip": true,
	"cluster-announce-port": true, "cluster-announce-bus-port": true, "cluster-announce-tls-port": true, "cluster-announce-hostname": true,
	"replica-announce-ip": true, "replica-announce-port": true, "unixsocketperm": true, "bind-source-addr": true}

// readSettings reads name, value rows, secrets and identities left out.
func readSettings(next func() bool, scan func(...any) error, rowsErr func() error, closeRows func() error) (map[string]string, error) {
	defer func() { _ = closeRows() }()
	out := map[string]string{}
	for next() {
		var name, value string
		if err := scan(&name, &value); err != nil {
			return nil, err
		}
		if !secretSetting(name, value) && !mysqlIdentity[name] && len(out) < maxSettings {
			out[name] = value
		}
	}
	return out, rowsErr()
}

// mysqlIdentity are MySQL's variables that say where a server is.
var mysqlIdentity = map[string]bool{"port": true, "socket": true, "datadir": true, "hostname": true, "server_id": true, "server_uuid": true,
	"pid_file": true, "log_error": true, "general_log_file": true, "slow_query_log_file": true, "bind_address": true, "report_host": true,
	"report_port": true, "tmpdir": true, "log_bin_basename": true, "log_bin_index": true, "relay_log_basename": true, "relay_log_index": true,
	"innodb_data_home_dir": true, "innodb_log_group_home_dir": true, "plugin_dir": true, "basedir": true, "ssl_cert": true, "ssl_key": true,
	"ssl_ca": true, "ssl_capath": true, "timestamp": true, "gtid_executed": true, "gtid_purged": true}
