package hammerdb

import (
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// A TLS 1.2 cipher reaches HammerDB's mysql_ssl_cipher by its OpenSSL
// name, however the user named it; a TLS 1.3 suite does not (HammerDB's
// C client takes only TLS 1.2 ciphers there): the runner's session check
// guards it.
func TestMySQLCipherReachesHammerDB(t *testing.T) {
	spec := seed(benchv1.HammerDBMySQL, 10)
	for cipher, want := range map[string]string{
		"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "diset connection mysql_ssl_cipher ECDHE-ECDSA-AES128-GCM-SHA256\n",
		"ECDHE-RSA-AES256-GCM-SHA384":             "diset connection mysql_ssl_cipher ECDHE-RSA-AES256-GCM-SHA384\n",
		"TLS_AES_128_GCM_SHA256":                  "",
	} {
		ep := pod.Endpoint{Host: "h", Port: 3306, TLS: true, CASecret: "ca", TLSVersion: "TLSv1.2", TLSCipher: cipher}
		for name, body := range Scripts(spec.HammerDB, ep) {
			if got := strings.Contains(body, "mysql_ssl_cipher"); got != (want != "") || want != "" && !strings.Contains(body, want) {
				t.Errorf("%s, %s: want %q in\n%s", cipher, name, want, body)
			}
		}
	}
	var h HammerDB
	if s := h.Speaks(spec); s != (workloads.Speaks{Protocol: pod.ProtocolMySQL}) {
		t.Errorf("HammerDB on MySQL speaks %+v", s)
	}
	if pg := seed(benchv1.HammerDBPostgres, 10); h.Speaks(pg).Protocol != pod.ProtocolPostgres {
		t.Errorf("HammerDB on PostgreSQL speaks %+v", h.Speaks(pg))
	}
}
