package pod

import "fmt"

// SessionCheck are exec's flags of the session check: after the tool ran,
// one session of the workload's user (EnvUsername, EnvPassword) at
// Address, with the tool's TLS request, must have negotiated TLSVersion
// and TLSCipher and have Variables. Zero: no check.
type SessionCheck struct {
	Address Address
	// Protocol is the protocol of the session (one that is Checked).
	Protocol Protocol
	TLS      TLSClient
	// TLSVersion (TLSv1.2, TLSv1.3) and TLSCipher (an IANA or OpenSSL
	// name) are asked for and checked; empty: either, any.
	TLSVersion, TLSCipher string
	Variables             map[string]string
}

// Enabled says whether the flags ask for a check.
func (s SessionCheck) Enabled() bool { return s.Address.Host != "" }

func (s *SessionCheck) bind(t *flagTable) {
	t.address(&s.Address, flagSessionCheck, "HOST:PORT: after the tool ran, check a session of the workload's user there (TLS negotiated, session variables); empty: do not")
	t.str((*string)(&s.Protocol), flagSessionProtocol, string(ProtocolMySQL), "the protocol of the session check (only "+string(ProtocolMySQL)+")")
	s.TLS.bind(t, sessionTLSFlags)
	t.str(&s.TLSVersion, flagSessionTLSVersion, "", "TLS version asked for and checked (TLSv1.2, TLSv1.3)")
	t.str(&s.TLSCipher, flagSessionTLSCipher, "", "TLS cipher asked for and checked (IANA or OpenSSL name)")
	t.pairs(&s.Variables, flagSessionVariable, "NAME=VALUE: a session variable the session must have (repeatable)")
}

// Args are the check's flags alone.
func (s SessionCheck) Args() []string {
	var t flagTable
	s.bind(&t)
	return t.render()
}

// Validate checks what the flags cannot: a protocol the check speaks, and
// TLS settings only over TLS.
func (s SessionCheck) Validate() error {
	if !s.Enabled() {
		return nil
	}
	if !s.Protocol.Checked() {
		return fmt.Errorf("--%s %q: only %s is checked", flagSessionProtocol, s.Protocol, ProtocolMySQL)
	}
	if !s.TLS.Enabled && (s.TLSVersion != "" || s.TLSCipher != "") {
		return fmt.Errorf("--%s and --%s need --%s", flagSessionTLSVersion, flagSessionTLSCipher, sessionTLSFlags.enabled)
	}
	return nil
}
