// Package tlsciphers names TLS cipher suites both ways: by their IANA name
// (TLS_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256), which Go
// and the TLS 1.3 world use, and by their OpenSSL name
// (ECDHE-RSA-AES128-GCM-SHA256), which servers built on OpenSSL take and
// report for TLS 1.2. A user may ask for a cipher by either name; the
// negotiated one is compared whatever its spelling.
package tlsciphers

import (
	"crypto/tls"
	"strings"
)

// openSSLNames maps IANA names of the common TLS 1.2 suites to OpenSSL's.
// TLS 1.3 suites have one name in both (OpenSSL took IANA's).
var openSSLNames = map[string]string{
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256":       "ECDHE-ECDSA-AES128-GCM-SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384":       "ECDHE-ECDSA-AES256-GCM-SHA384",
	"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256":         "ECDHE-RSA-AES128-GCM-SHA256",
	"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384":         "ECDHE-RSA-AES256-GCM-SHA384",
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256":   "ECDHE-RSA-CHACHA20-POLY1305",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA":          "ECDHE-ECDSA-AES128-SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA":          "ECDHE-ECDSA-AES256-SHA",
	"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA":            "ECDHE-RSA-AES128-SHA",
	"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA":            "ECDHE-RSA-AES256-SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256":       "ECDHE-ECDSA-AES128-SHA256",
	"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256":         "ECDHE-RSA-AES128-SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384":       "ECDHE-ECDSA-AES256-SHA384",
	"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384":         "ECDHE-RSA-AES256-SHA384",
	"TLS_DHE_RSA_WITH_AES_128_GCM_SHA256":           "DHE-RSA-AES128-GCM-SHA256",
	"TLS_DHE_RSA_WITH_AES_256_GCM_SHA384":           "DHE-RSA-AES256-GCM-SHA384",
	"TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256":     "DHE-RSA-CHACHA20-POLY1305",
	"TLS_RSA_WITH_AES_128_GCM_SHA256":               "AES128-GCM-SHA256",
	"TLS_RSA_WITH_AES_256_GCM_SHA384":               "AES256-GCM-SHA384",
	"TLS_RSA_WITH_AES_128_CBC_SHA":                  "AES128-SHA",
	"TLS_RSA_WITH_AES_256_CBC_SHA":                  "AES256-SHA",
	"TLS_RSA_WITH_AES_128_CBC_SHA256":               "AES128-SHA256",
	"TLS_RSA_WITH_AES_256_CBC_SHA256":               "AES256-SHA256",
}

// tls13 are the TLS 1.3 suites, named alike by IANA and OpenSSL.
var tls13 = map[string]bool{
	"TLS_AES_128_GCM_SHA256": true, "TLS_AES_256_GCM_SHA384": true, "TLS_CHACHA20_POLY1305_SHA256": true,
	"TLS_AES_128_CCM_SHA256": true, "TLS_AES_128_CCM_8_SHA256": true,
}

var ianaNames = func() map[string]string {
	m := make(map[string]string, len(openSSLNames))
	for iana, o := range openSSLNames {
		m[o] = iana
	}
	return m
}()

// IANA is the IANA name of a suite named either way; a name it does not
// know comes back as given (upper case), so that it still compares with
// itself.
func IANA(name string) string {
	n := strings.ToUpper(strings.TrimSpace(name))
	if iana, ok := ianaNames[n]; ok {
		return iana
	}
	return n
}

// OpenSSL is the OpenSSL name of a suite named either way (a TLS 1.3
// suite's one name); a name it does not know comes back as given.
func OpenSSL(name string) string {
	n := IANA(name)
	if o, ok := openSSLNames[n]; ok {
		return o
	}
	return n
}

// Same says whether two names, each IANA or OpenSSL, are one suite.
func Same(a, b string) bool { return IANA(a) == IANA(b) }

// IsTLS13 says whether the suite is one of TLS 1.3's.
func IsTLS13(name string) bool { return tls13[IANA(name)] }

// Known says whether the name is a suite of the table, by either name.
func Known(name string) bool {
	n := IANA(name)
	_, ok := openSSLNames[n]
	return ok || tls13[n]
}

// GoID is Go's identifier of a suite named either way, when crypto/tls
// implements it (insecure ones included: a user may measure them).
func GoID(name string) (uint16, bool) {
	n := IANA(name)
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		if s.Name == n {
			return s.ID, true
		}
	}
	return 0, false
}
