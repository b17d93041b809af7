package results

import (
	"sort"
	"strings"
)

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
	// DiagnosticFunction is a function of the server's processes, from
	// an on-CPU profile (perf's cpu-clock samples of the processes'
	// stacks): its self time, the samples in which it ran itself.
	DiagnosticFunction DiagnosticKind = "function"
)

// DiagnosticKinds are the kinds in the order reports show them.
var DiagnosticKinds = []DiagnosticKind{DiagnosticStatement, DiagnosticWait, DiagnosticCommand, DiagnosticFunction}

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
	// Profile is the on-CPU profile of the server's processes over the
	// window, when one was asked for and could be taken.
	Profile *Profile `json:"profile,omitempty"`
	// Notes say what could not be read and why (the extension missing,
	// the statements evicted, the plans of a version without GENERIC_PLAN).
	Notes []string `json:"notes,omitempty"`
}

// Profile is an on-CPU profile: samples of the stacks of the server's
// processes at a fixed frequency of CPU time (perf's cpu-clock event), as
// folded stacks ("process;outermost;...;innermost" and its samples, the
// format flame graphs are drawn from).
type Profile struct {
	// Event sampled, and its frequency per CPU second.
	Event       string  `json:"event"`
	FrequencyHz float64 `json:"frequencyHz"`
	// Samples of the server's processes over the window (each one
	// 1/FrequencyHz of CPU time), and of the whole host.
	Samples     int `json:"samples"`
	HostSamples int `json:"hostSamples"`
	// Processes is how many of the server's processes were seen running.
	Processes int `json:"processes"`
	// ProfilerCPUSeconds is what the profile cost: perf's CPU time,
	// recording and reading its stacks back (the kernel's time taking
	// the samples is in the sampled processes' own).
	ProfilerCPUSeconds float64 `json:"profilerCPUSeconds"`
	// Stacks are the folded stacks, most samples first, the largest
	// MaxProfileStacks; OtherSamples are those of the stacks left out.
	Stacks       []FoldedStack `json:"stacks,omitempty"`
	OtherSamples int           `json:"otherSamples,omitempty"`
}

// FoldedStack is one call stack, outermost frame first, frames separated
// by ";", and how many samples found it.
type FoldedStack struct {
	Stack   string `json:"stack"`
	Samples int    `json:"samples"`
}

// MaxProfileStacks is how many distinct stacks a profile keeps.
const MaxProfileStacks = 400

// Millis is the CPU time of n samples.
func (p *Profile) Millis(n int) float64 {
	if p == nil || p.FrequencyHz <= 0 {
		return 0
	}
	return float64(n) * 1000 / p.FrequencyHz
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

// LevelFigure says whether an item's figure is a level over the window
// (the average active sessions of a wait event, a command's latency
// percentile in microseconds), which is compared as it is, not per
// transaction as a count is.
func LevelFigure(name string) bool {
	return name == "averageActiveSessions" || strings.HasSuffix(name, "Micros")
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
	for _, k := range DiagnosticKinds {
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
