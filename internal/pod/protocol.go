package pod

// The SQL protocols a tool may speak to its target.
const (
	ProtocolMySQL      = "mysql"
	ProtocolPostgreSQL = "postgresql"
)
