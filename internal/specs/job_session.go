package specs

import (
	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// sessionCheck is the runner's session check of a measurement whose tool
// speaks a protocol that is Checked (MySQL's) to an endpoint that asks for a TLS version or
// cipher or for session variables: after the tool ran, one session of the
// workload's user, with the tool's TLS request, must have them.
// Credentials are never flags.
func sessionCheck(p JobParams) pod.SessionCheck {
	ep := p.Endpoint
	if p.Role != benchv1.RoleLoadgen || !p.Protocol.Checked() ||
		ep.TLSVersion == "" && ep.TLSCipher == "" && len(ep.SessionVariables) == 0 {
		return pod.SessionCheck{}
	}
	c := pod.SessionCheck{Address: ep.Address(), Protocol: p.Protocol, TLS: ep.ClientTLS(), Variables: ep.SessionVariables}
	if ep.TLS {
		c.TLSVersion, c.TLSCipher = ep.TLSVersion, ep.TLSCipher
	}
	return c
}
