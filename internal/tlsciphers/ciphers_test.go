package tlsciphers

import (
	"crypto/tls"
	"testing"
)

func TestNamesBothWays(t *testing.T) {
	for name, tc := range map[string]struct {
		in, iana, openssl string
		tls13             bool
	}{
		"TLS 1.3 by its one name":           {"TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", true},
		"TLS 1.3 in lower case":             {"tls_aes_256_gcm_sha384", "TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384", true},
		"TLS 1.2 by its IANA name":          {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", false},
		"TLS 1.2 by its OpenSSL name":       {"ECDHE-RSA-AES256-GCM-SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384", false},
		"ChaCha20, whose names differ most": {"ECDHE-ECDSA-CHACHA20-POLY1305", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", false},
		"a name it does not know":           {"NO-SUCH-CIPHER", "NO-SUCH-CIPHER", "NO-SUCH-CIPHER", false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := IANA(tc.in); got != tc.iana {
				t.Errorf("IANA(%s) = %s, want %s", tc.in, got, tc.iana)
			}
			if got := OpenSSL(tc.in); got != tc.openssl {
				t.Errorf("OpenSSL(%s) = %s, want %s", tc.in, got, tc.openssl)
			}
			if got := IsTLS13(tc.in); got != tc.tls13 {
				t.Errorf("IsTLS13(%s) = %v", tc.in, got)
			}
			if !Same(tc.iana, tc.openssl) || !Same(tc.in, tc.openssl) {
				t.Errorf("%s, %s and %s are not the same suite", tc.in, tc.iana, tc.openssl)
			}
		})
	}
	if Same("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384") || Same("ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256") {
		t.Error("different suites compare the same")
	}
}

// Every IANA name of the table is Go's own name of its suite where Go
// implements it, and each suite Go implements (TLS 1.3's aside) is in
// the table, so that a cipher Go negotiates or asks for can always be named
// the OpenSSL way.
func TestTableAgreesWithGo(t *testing.T) {
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		if tls.CipherSuiteName(s.ID) != s.Name {
			t.Fatalf("Go names %#04x %s and %s", s.ID, tls.CipherSuiteName(s.ID), s.Name)
		}
		isTLS13 := len(s.SupportedVersions) == 1 && s.SupportedVersions[0] == tls.VersionTLS13
		if isTLS13 != IsTLS13(s.Name) {
			t.Errorf("%s: TLS 1.3 %v, the table says %v", s.Name, isTLS13, IsTLS13(s.Name))
		}
		if id, ok := GoID(OpenSSL(s.Name)); Known(s.Name) && (!ok || id != s.ID) {
			t.Errorf("%s by its OpenSSL name %s: id %#04x, %v", s.Name, OpenSSL(s.Name), id, ok)
		}
		insecure := false
		for _, i := range tls.InsecureCipherSuites() {
			insecure = insecure || i.ID == s.ID
		}
		if !insecure && !Known(s.Name) {
			t.Errorf("Go's suite %s is not in the table", s.Name)
		}
	}
}
