package results

import "sort"

// DiagnosticKind is what a diagnostic item is: where the server spent its
// time, by statement, wait event or command.
type DiagnosticKind string

const (
	// DiagnosticStatement is a normalized statement (PostgreSQL's
	// pg_stat_statements): its execution time.
	DiagnosticStatement DiagnosticKind = "statement"
	// DiagnosticWait is a wait event of the active sessions, or "CPU"
	// for those running (PostgreSQL's pg_stat_activity, sampled): the
	// sessions' time in it.
	DiagnosticWait DiagnosticKind = "wait"
	// DiagnosticCommand is a command of a key-value server (Valkey's and
	// Redis's INFO commandstats): its time in the server.
	DiagnosticCommand DiagnosticKind = "command"
)

// Diagnostics are where the target server spent its time over a
// measurement's steady window: the difference of two snapshots of its
// cumulative statistics (no reset: another measurement's window on the
// same server is never touched) and samples of what its sessions waited
// on. Their figures are divided by the transactions the server counted
// over the same window, so that two variants at different throughputs
// compare per unit of work.
type Diagnostics struct {
	// Source names the statistics: "postgresql", "redis".
	Source string `json:"source"`
	// WindowSeconds is the time between the two snapshots.
	WindowSeconds float64 `json:"windowSeconds"`
	// Transactions the server counted over the window, and from what
	// (PostgreSQL: the database's commits and rollbacks; Valkey: the
	// commands it processed): what the per-transaction figures divide by.
	Transactions     float64 `json:"transactions"`
	TransactionsFrom string  `json:"transactionsFrom"`
	// WaitSamples is how many samples of the sessions' waits the window
	// took, every WaitSampleIntervalMillis.
	WaitSamples              int     `json:"waitSamples,omitempty"`
	WaitSampleIntervalMillis float64 `json:"waitSampleIntervalMillis,omitempty"`
	// Items are the statements, wait events and commands, most time
	// first, the largest few of each kind.
	Items []DiagnosticItem `json:"items,omitempty"`
	// Notes say what could not be read and why (the extension missing,
	// the statements evicted, the plans of a version without GENERIC_PLAN).
	Notes []string `json:"notes,omitempty"`
}

// DiagnosticItem is one statement, wait event or command over the window.
type DiagnosticItem struct {
	Kind DiagnosticKind `json:"kind"`
	// Name is the statement's normalized text, the wait event's
	// "type:event" (or "CPU"), the command's name.
	Name string `json:"name"`
	// Calls over the window (statements and commands).
	Calls float64 `json:"calls,omitempty"`
	// TimeMillis is the time spent in it over the window: a statement's
	// or command's execution time, a wait event's session time (its
	// samples × the interval).
	TimeMillis float64 `json:"timeMillis"`
	// Figures are its other counters over the window by name (rows,
	// sharedBlocksHit, sharedBlocksRead, tempBlocksWritten, walBytes,
	// failedCalls, ...).
	Figures map[string]float64 `json:"figures,omitempty"`
	// Plan is a statement's plan (EXPLAIN of its generic plan, costs off)
	// when plans were asked for.
	Plan string `json:"plan,omitempty"`
}

// Per divides a figure over the window by the window's transactions.
func (d *Diagnostics) Per(v float64) float64 {
	if d == nil || d.Transactions <= 0 {
		return 0
	}
	return v / d.Transactions
}

// Top keeps the most time-consuming n items of each kind, most time
// first within a kind, kinds in a fixed order.
func (d *Diagnostics) Top(n int) {
	byKind := map[DiagnosticKind][]DiagnosticItem{}
	for _, it := range d.Items {
		byKind[it.Kind] = append(byKind[it.Kind], it)
	}
	d.Items = d.Items[:0]
	for _, k := range []DiagnosticKind{DiagnosticStatement, DiagnosticWait, DiagnosticCommand} {
		items := byKind[k]
		sort.SliceStable(items, func(i, j int) bool {
			if items[i].TimeMillis != items[j].TimeMillis {
				return items[i].TimeMillis > items[j].TimeMillis
			}
			return items[i].Name < items[j].Name
		})
		if len(items) > n {
			items = items[:n]
		}
		d.Items = append(d.Items, items...)
	}
}
