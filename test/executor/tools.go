package executor

import (
	"os"
	"path/filepath"
	"sort"
)

// The tools the hack scripts build or fetch into the cache
// (~/.cache/dbperf, or DBPERF_CACHE), found without environment variables,
// so that the embedded cluster (hack/quickstart.sh --up-only) runs what the
// tests run. The variable hack/test.sh sets still wins.

// cacheRoot is where the hack scripts cache what they build.
func cacheRoot() string {
	if d := os.Getenv("DBPERF_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "dbperf")
	}
	return filepath.Join(os.Getenv("HOME"), ".cache", "dbperf")
}

// cached is the environment variable's value, or else the newest path
// under the cache matching pattern (by modification time), or "".
func cached(env, pattern string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	matches, _ := filepath.Glob(filepath.Join(cacheRoot(), pattern))
	type found struct {
		path string
		mod  int64
	}
	var fs []found
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil {
			fs = append(fs, found{m, st.ModTime().UnixNano()})
		}
	}
	if len(fs) == 0 {
		return ""
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].mod > fs[j].mod })
	return fs[0].path
}

// The tools, by the variable hack/test.sh sets and where the hack scripts
// put them.
func memtierBin() string   { return cached("MEMTIER", "tools/*/memtier/bin/memtier_benchmark") }
func hammerdbHome() string { return cached("HAMMERDB_HOME", "tools/*/HammerDB-4.12") }
func k6Bin() string        { return cached("K6", "k6-*/k6") }
func ycsbLib() string      { return cached("YCSB_LIB", "ycsb-*/lib") }
func FerretDBBin() string  { return cached("FERRETDB", "ferretdb-*/ferretdb") }
