package sessioncheck

import (
	"crypto/tls"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSameValue(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		same      bool
	}{
		{"1", "ON", true}, {"ON", "on", true}, {"TRUE", "1", true}, {"0", "OFF", true}, {"OFF", "false", true},
		{"0", "ON", false}, {"1", "OFF", false},
		{"READ-COMMITTED", "read-committed", true}, {"REPEATABLE-READ", "READ-COMMITTED", false},
		{"8.000", "8", true}, {"16", "8", false}, {"", "ON", false},
	} {
		if got := SameValue(tc.got, tc.want); got != tc.same {
			t.Errorf("SameValue(%q, %q) = %v", tc.got, tc.want, got)
		}
	}
}

func TestProblemsNameBothValues(t *testing.T) {
	asked := Check{TLS: &tls.Config{}, TLSVersion: "TLSv1.2", TLSCipher: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
		Variables: map[string]string{"autocommit": "ON", "transaction_isolation": "READ-COMMITTED"}}
	for name, tc := range map[string]struct {
		had  Session
		want []string
	}{
		"all as asked, the cipher by its OpenSSL name": {Session{TLSVersion: "TLSv1.2", TLSCipher: "ECDHE-RSA-AES128-GCM-SHA256",
			Variables: map[string]string{"autocommit": "1", "transaction_isolation": "READ-COMMITTED"}}, nil},
		"another version and cipher, autocommit off": {Session{TLSVersion: "TLSv1.3", TLSCipher: "TLS_AES_256_GCM_SHA384",
			Variables: map[string]string{"autocommit": "0", "transaction_isolation": "READ-COMMITTED"}},
			[]string{"TLS version negotiated TLSv1.3, asked for TLSv1.2",
				"TLS cipher negotiated TLS_AES_256_GCM_SHA384, asked for TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
				"session variable autocommit is 0, asked for ON"}},
		"not encrypted": {Session{Variables: map[string]string{"autocommit": "ON", "transaction_isolation": "READ-COMMITTED"}},
			[]string{"the session check's session was not encrypted although TLS was asked for",
				"TLS version negotiated none, asked for TLSv1.2",
				"TLS cipher negotiated none, asked for TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, asked.Problems(tc.had)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
