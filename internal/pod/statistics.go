package pod

import (
	"fmt"
	"time"
)

// Statistics are exec's flags of the statistics poller: while the tool
// runs, the runner polls the target's own statistics, those of a server of
// Protocol, at Address, with the credentials of EnvUsername and
// EnvPassword. Zero: no polling.
type Statistics struct {
	Protocol Protocol
	Address  Address
	// Database is the one the poller connects to (PostgreSQL) or logs in
	// to (MongoDB: default admin); empty: the server's default.
	Database     string
	PollInterval time.Duration
	TLS          TLSClient
	// Diagnostics records where the server spent its time over the steady
	// window (statements, commands); WaitInterval samples its sessions'
	// waits (0: not); Plans explains its top statements; ProfileHz
	// profiles the server's processes at that frequency (0: not).
	Diagnostics  bool
	WaitInterval time.Duration
	Plans        bool
	ProfileHz    int
}

// Enabled says whether the flags ask for polling.
func (s Statistics) Enabled() bool { return s.Protocol != "" }

func (s *Statistics) bind(t *flagTable) {
	t.str((*string)(&s.Protocol), flagServerStatistics, "", "poll the target's own statistics while the tool runs, in this protocol of its server; empty: do not")
	t.address(&s.Address, flagServerAddress, "HOST:PORT of the target whose statistics are polled")
	t.str(&s.Database, flagServerDatabase, "", "database the statistics poller connects to, or authenticates against (empty: the protocol's default)")
	t.duration(&s.PollInterval, flagServerPollInterval, DefaultPollInterval, "time between polls of the server's statistics")
	s.TLS.bind(t, statisticsTLSFlags)
	t.boolean(&s.Diagnostics, flagServerDiagnostics, "record where the server spends its time over the steady window (statements, commands)")
	t.duration(&s.WaitInterval, flagServerWaitInterval, 0, "time between samples of the server's sessions' waits (0: not sampled)")
	t.boolean(&s.Plans, flagServerPlans, "explain the server's top statements at the window's end")
	t.integer(&s.ProfileHz, flagServerProfileHz, 0, "profile the server's processes with perf at this many samples a CPU second over the steady window (0: no profile)")
}

// Args are the poller's flags alone.
func (s Statistics) Args() []string {
	var t flagTable
	s.bind(&t)
	return t.render()
}

// Validate checks what the flags cannot: a protocol the runner polls, an
// address to poll and an interval the server will not notice.
func (s Statistics) Validate() error {
	if !s.Enabled() {
		return nil
	}
	if !s.Protocol.HasStatistics() {
		return fmt.Errorf("--%s %q: must be one of %v", flagServerStatistics, s.Protocol, statisticsProtocols)
	}
	if s.Address.Host == "" {
		return fmt.Errorf("--%s needs --%s", flagServerStatistics, flagServerAddress)
	}
	if s.PollInterval < 100*time.Millisecond {
		return fmt.Errorf("--%s %s: must be at least 100ms", flagServerPollInterval, s.PollInterval)
	}
	if s.ProfileHz < 0 || s.ProfileHz > 999 {
		return fmt.Errorf("--%s %d: must be between 0 and 999", flagServerProfileHz, s.ProfileHz)
	}
	if s.WaitInterval != 0 && s.WaitInterval < 10*time.Millisecond {
		return fmt.Errorf("--%s %s: must be at least 10ms", flagServerWaitInterval, s.WaitInterval)
	}
	return nil
}
