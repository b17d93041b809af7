package specs

import (
	"sort"
	"strings"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/tlsciphers"
)

// MySQLSessionArgs are the server arguments of the TLS version and cipher
// the spec asks for and of its session variables, each the server's
// default (autocommit: ON → --autocommit=ON; sql_mode → --sql-mode).
//
// The cipher is the only one the server offers: a TLS 1.2 suite by its
// OpenSSL name in --ssl-cipher, a TLS 1.3 suite in --tls-ciphersuites.
// MariaDB has no --tls-ciphersuites and takes TLS 1.3 suites in
// --ssl-cipher, so an image named mariadb gets that instead. Without a
// version, the cipher's own version is the only one offered, since a
// server that also spoke the other version would negotiate another suite.
func MySQLSessionArgs(t *benchv1.MySQLTarget) []string {
	var args []string
	if tls := t.TLS; tls != nil && tls.Enabled {
		version := tls.Version
		if version == "" && tls.Cipher != "" {
			version = benchv1.TLSv12
			if tlsciphers.IsTLS13(tls.Cipher) {
				version = benchv1.TLSv13
			}
		}
		if version != "" {
			args = append(args, "--tls-version="+string(version))
		}
		switch c := tls.Cipher; {
		case c == "":
		case !tlsciphers.IsTLS13(c):
			args = append(args, "--ssl-cipher="+tlsciphers.OpenSSL(c))
		case strings.Contains(strings.ToLower(t.Image), "mariadb"):
			args = append(args, "--ssl-cipher="+tlsciphers.IANA(c))
		default:
			args = append(args, "--tls-ciphersuites="+tlsciphers.IANA(c))
		}
	}
	names := make([]string, 0, len(t.SessionVariables))
	for k := range t.SessionVariables {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, "--"+strings.ReplaceAll(k, "_", "-")+"="+string(t.SessionVariables[k]))
	}
	return args
}
