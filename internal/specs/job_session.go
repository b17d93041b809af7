package specs

import (
	"net"
	"sort"
	"strconv"

	"github.com/dbperf-io/dbperf-operator/workloads"
)

// sessionCheckArgs are the runner's flags of the session check of a
// measurement whose tool speaks MySQL's protocol to an endpoint that asks
// for a TLS version or cipher or for session variables: after the tool
// ran, one session of the workload's user, with the tool's TLS request,
// must have them. Credentials are never flags.
func sessionCheckArgs(p JobParams) []string {
	ep := p.Endpoint
	if p.Role != RoleLoadgen || p.SQLProtocol != workloads.ProtocolMySQL ||
		ep.TLSVersion == "" && ep.TLSCipher == "" && len(ep.SessionVariables) == 0 {
		return nil
	}
	args := []string{"--session-check", net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))), "--session-protocol", p.SQLProtocol}
	if ep.TLS {
		args = append(args, "--session-tls")
		if ep.CASecret != "" {
			args = append(args, "--session-tls-ca", workloads.CAFile)
		}
		if ep.ClientCertSecret != "" {
			args = append(args, "--session-tls-cert", workloads.ClientCertFile, "--session-tls-key", workloads.ClientKeyFile)
		}
		if ep.ServerName != "" {
			args = append(args, "--session-tls-name", ep.ServerName)
		}
		if ep.TLSVersion != "" {
			args = append(args, "--session-tls-version", ep.TLSVersion)
		}
		if ep.TLSCipher != "" {
			args = append(args, "--session-tls-cipher", ep.TLSCipher)
		}
	}
	names := make([]string, 0, len(ep.SessionVariables))
	for k := range ep.SessionVariables {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, "--session-variable", k+"="+ep.SessionVariables[k])
	}
	return args
}
