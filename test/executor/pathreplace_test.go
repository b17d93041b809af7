package executor

import "testing"

func TestPathReplacerWholePaths(t *testing.T) {
	r := pathReplacer{{"/etc/dbperf/tls", "/w/tls"}, {"/dbperf", "/w/dbperf"}, {"/opt/ycsb/lib", "/c/lib"}}
	for in, want := range map[string]string{
		"diset connection mysql_ssl_linux_capath /etc/dbperf/tls\n": "diset connection mysql_ssl_linux_capath /w/tls\n",
		"ca /etc/dbperf/tls/ca.crt":                                 "ca /w/tls/ca.crt",
		"out=/dbperf/out/x.json":                                    "out=/w/dbperf/out/x.json",
		"/dbperfx/y /x/dbperf/y":                                    "/dbperfx/y /x/dbperf/y",
		"cp /opt/ycsb/lib/*:/opt/ycsb/lib":                          "cp /c/lib/*:/c/lib",
		`"/dbperf"`:                                                 `"/w/dbperf"`,
	} {
		if got := r.Replace(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}
