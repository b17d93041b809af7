package results

import "time"

// Disturbance is what happened to the target in a measurement
// (spec.disturbances): its instants, on the same clock as StartTime, so
// that a card is computed from the time series and a report shades its
// window; what the runner's SQL load and write ledger saw; the target's
// events. Its card's figures are metrics (source "disturbance", operation
// its name).
type Disturbance struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// OffsetSeconds is when it was planned, from the tool's start.
	OffsetSeconds float64    `json:"offsetSeconds"`
	Requested     *time.Time `json:"requested,omitempty"`
	TookEffect    *time.Time `json:"tookEffect,omitempty"`
	Ended         *time.Time `json:"ended,omitempty"`
	Removed       *time.Time `json:"removed,omitempty"`
	// Member and Node are the pod and node it acted on; NewPrimary the
	// primary after a member loss, at NewPrimaryTime.
	Member         string     `json:"member,omitempty"`
	Node           string     `json:"node,omitempty"`
	NewPrimary     string     `json:"newPrimary,omitempty"`
	NewPrimaryTime *time.Time `json:"newPrimaryTime,omitempty"`
	FullRedundancy *time.Time `json:"fullRedundancy,omitempty"`
	Message        string     `json:"message,omitempty"`
	// Refused: the operator did not act (Message says why).
	Refused bool `json:"refused,omitempty"`
	// Errors during it by class (a database error code), as the runner's
	// own sessions saw them.
	Errors map[string]float64 `json:"errors,omitempty"`
	// SQL is what a SQL load did.
	SQL *SQLLoadReport `json:"sql,omitempty"`
	// Ledger is the write ledger's check.
	Ledger *LedgerReport `json:"ledger,omitempty"`
	// Neighbour is the stress pod's own report (a JSON object).
	Neighbour map[string]float64 `json:"neighbour,omitempty"`
	// Events are the target's events on the measurement's clock.
	Events []Event `json:"events,omitempty"`
}

// SQLLoadReport is what a SQL load's sessions did.
type SQLLoadReport struct {
	Sessions            int   `json:"sessions"`
	SessionsConnected   int   `json:"sessionsConnected"`
	StatementsCompleted int64 `json:"statementsCompleted"`
	StatementsCancelled int64 `json:"statementsCancelled"`
}

// LedgerReport is the write ledger's check: numbered writes through the
// target's endpoint during the disturbance, read back after it.
type LedgerReport struct {
	Acknowledged int `json:"acknowledged"`
	Failed       int `json:"failed"`
	// Missing names acknowledged writes not found afterwards (at most
	// 100); MissingCount counts them all.
	Missing      []string   `json:"missing,omitempty"`
	MissingCount int        `json:"missingCount"`
	FirstFailure *time.Time `json:"firstFailure,omitempty"`
	LastFailure  *time.Time `json:"lastFailure,omitempty"`
	Reconnected  *time.Time `json:"reconnected,omitempty"`
}

// Event is one thing that happened to the target, on the timeline of a
// measurement: a pod deleted, a new primary, the target ready again.
type Event struct {
	Time    time.Time `json:"t"`
	Subject string    `json:"subject"`
	Message string    `json:"message"`
}
