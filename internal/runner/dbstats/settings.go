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
