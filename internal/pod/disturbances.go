package pod

import (
	"encoding/json"
	"fmt"
	"time"
)

// RunnerDisturbance is one disturbance the runner of the first load
// generator acts on itself (a SQL load on the target) or accompanies (a
// lost member, whose acknowledged writes its ledger checks), as exec's
// repeatable --disturbance flag carries it: a JSON object. Offsets count
// from the tool's start; the credentials of a SQL load are never flags:
// they come from EnvDisturbUsername and EnvDisturbPassword, else the
// workload's.
type RunnerDisturbance struct {
	Name string `json:"name"`
	// Kind is the spec's: sqlLoad, noisyNeighbour, memberLoss or network.
	Kind     string        `json:"kind"`
	Offset   time.Duration `json:"offset"`
	Duration time.Duration `json:"duration,omitempty"`
	// SQLLoad: the sessions and their statements (kind sqlLoad).
	Sessions   int      `json:"sessions,omitempty"`
	Statements []string `json:"statements,omitempty"`
	Once       bool     `json:"once,omitempty"`
	// Administrator: the SQL load uses EnvDisturbUsername/Password.
	Administrator bool `json:"administrator,omitempty"`
	// Ledger writes numbered rows from LedgerLead before the offset to
	// the end of the measurement, and reads them back after.
	Ledger bool `json:"ledger,omitempty"`
	// Protocol, Address, Database and TLS reach the target (its
	// endpoint, as the statistics poller reaches it).
	Protocol Protocol  `json:"protocol,omitempty"`
	Address  Address   `json:"address"`
	Database string    `json:"database,omitempty"`
	TLS      TLSClient `json:"tls"`
}

// LedgerLead is how long before a member loss its write ledger starts.
const LedgerLead = 5 * time.Second

// The variables of a SQL load's administrator account.
const (
	EnvDisturbUsername = EnvPrefix + "DISTURB_USERNAME"
	EnvDisturbPassword = EnvPrefix + "DISTURB_PASSWORD"
)

func formatDisturbance(d RunnerDisturbance) string {
	b, _ := json.Marshal(d)
	return string(b)
}

func parseDisturbance(v string) (RunnerDisturbance, error) {
	var d RunnerDisturbance
	if err := json.Unmarshal([]byte(v), &d); err != nil {
		return d, fmt.Errorf("want a JSON object {name, kind, offset, ...}: %w", err)
	}
	switch {
	case d.Name == "":
		return d, fmt.Errorf("no name")
	case d.Offset <= 0:
		return d, fmt.Errorf("disturbance %s: offset %s: want a positive offset", d.Name, d.Offset)
	case d.Kind == "sqlLoad" && (d.Sessions < 1 || len(d.Statements) == 0 || d.Duration <= 0):
		return d, fmt.Errorf("disturbance %s: a sqlLoad needs sessions, statements and a duration", d.Name)
	}
	return d, nil
}
