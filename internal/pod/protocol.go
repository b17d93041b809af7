package pod

// Protocol is the wire protocol a tool speaks to its target. It is spelled
// as the API spells databases and protocols (custom.database,
// queryBench.driver, hammerDB.database, memtier.protocol, ycsb.binding):
// postgres, not postgresql. Tools say which one they speak; the pod
// connects to the target in it (the statistics poller, the session check).
type Protocol string

const (
	ProtocolPostgres   Protocol = "postgres"
	ProtocolMySQL      Protocol = "mysql"
	ProtocolRedis      Protocol = "redis"
	ProtocolMongoDB    Protocol = "mongodb"
	ProtocolOpenSearch Protocol = "opensearch"
	ProtocolClickHouse Protocol = "clickhouse"
)

// statisticsProtocols are the protocols of the servers whose own
// statistics the runner polls (internal/runner/dbstats has a poller of
// each, which a test there holds to this list).
var statisticsProtocols = []Protocol{ProtocolMongoDB, ProtocolMySQL, ProtocolOpenSearch, ProtocolPostgres, ProtocolRedis}

// StatisticsProtocols lists the protocols the runner polls statistics in.
func StatisticsProtocols() []Protocol {
	return append([]Protocol(nil), statisticsProtocols...)
}

// HasStatistics says whether the runner polls the statistics of a server
// of the protocol.
func (p Protocol) HasStatistics() bool {
	for _, q := range statisticsProtocols {
		if p == q {
			return true
		}
	}
	return false
}

// Checked says whether the runner checks a session in the protocol after
// a measurement (the TLS negotiated, the session variables).
func (p Protocol) Checked() bool { return p == ProtocolMySQL }
