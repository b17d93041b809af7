package specs

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// validName checks a name against its limit and the DNS rule the limit
// stands for.
func validName(t *testing.T, name string, limit int) {
	t.Helper()
	if len(name) > limit {
		t.Errorf("%q: %d characters, over %d", name, len(name), limit)
	}
	check := validation.IsDNS1123Subdomain
	if limit <= MaxNameLength {
		check = validation.IsDNS1035Label
	}
	if errs := check(name); len(errs) > 0 {
		t.Errorf("%q: %v", name, errs)
	}
}

func TestName(t *testing.T) {
	long := strings.Repeat("postgres-tpcc-", 20) // 280 characters
	cases := map[string]struct {
		a, b       [3]string // base, uid, suffix of two children
		limit      int
		wantA      string // "" when only validity and distinctness matter
		wantSuffix string
	}{
		"short names stay readable": {
			a: [3]string{"nightly", "u1", "c29000000"}, b: [3]string{"nightly", "u1", "c29000001"},
			limit: MaxObjectNameLength, wantA: "nightly-c29000000",
		},
		"a run's child that just fits": {
			a: [3]string{strings.Repeat("r", 54), "u1", "prepare"}, b: [3]string{strings.Repeat("r", 54), "u1", "results"},
			limit: MaxNameLength, wantA: strings.Repeat("r", 54) + "-prepare",
		},
		"bases that differ only after a 253-character cut": {
			a: [3]string{long + "a", "u1", "c29000000"}, b: [3]string{long + "b", "u2", "c29000000"},
			limit: MaxObjectNameLength, wantSuffix: "-c29000000",
		},
		"bases that differ only after a 56-character cut": {
			a: [3]string{strings.Repeat("x", 56) + "-a", "u1", "report"}, b: [3]string{strings.Repeat("x", 56) + "-b", "u2", "report"},
			limit: MaxNameLength, wantSuffix: "-report",
		},
		"one long name, owners that follow each other": {
			a: [3]string{long, "u1", "s3-r12"}, b: [3]string{long, "u2", "s3-r12"},
			limit: MaxNameLength, wantSuffix: "-s3-r12",
		},
		"a cut that ends in a dash": {
			a: [3]string{strings.Repeat("ab-", 30), "u1", "pg"}, b: [3]string{strings.Repeat("ab-", 30) + "x", "u1", "pg"},
			limit: MaxNameLength, wantSuffix: "-pg",
		},
		"a cut that ends in a dot": {
			a: [3]string{strings.Repeat("a.", 140), "u1", "x"}, b: [3]string{strings.Repeat("a.", 140) + "b", "u1", "x"},
			limit: MaxObjectNameLength, wantSuffix: "-x",
		},
		"a suffix too long to keep whole": {
			a: [3]string{"cmp", "u1", strings.Repeat("v", 70) + "-1"}, b: [3]string{"cmp", "u1", strings.Repeat("v", 70) + "-2"},
			limit: MaxNameLength,
		},
		"servers within the StatefulSet limit": {
			a: [3]string{long, "u1", "opensearch"}, b: [3]string{long, "u1", "mysql"},
			limit: MaxServerNameLength, wantSuffix: "-opensearch",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := Name(tc.a[0], tc.a[2], types.UID(tc.a[1]), tc.limit)
			b := Name(tc.b[0], tc.b[2], types.UID(tc.b[1]), tc.limit)
			validName(t, a, tc.limit)
			validName(t, b, tc.limit)
			if a == b {
				t.Errorf("two children share the name %q", a)
			}
			if again := Name(tc.a[0], tc.a[2], types.UID(tc.a[1]), tc.limit); again != a {
				t.Errorf("not deterministic: %q then %q", a, again)
			}
			if tc.wantA != "" && a != tc.wantA {
				t.Errorf("got %q, want %q", a, tc.wantA)
			}
			if !strings.HasSuffix(a, tc.wantSuffix) || !strings.HasPrefix(a, tc.a[0][:1]) {
				t.Errorf("%q does not keep the base's start and the suffix %q", a, tc.wantSuffix)
			}
		})
	}
}

// A run with the longest name gets children whose names the API server
// accepts, StatefulSets short enough for their pods' revision label, and
// distinct client and headless Services.
func TestServerNamesOfALongRun(t *testing.T) {
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("r", MaxObjectNameLength), Namespace: "perf", UID: "u1"},
		Spec: benchv1.BenchmarkRunSpec{Target: benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}, MySQL: &benchv1.MySQLTarget{},
			MongoDB: &benchv1.MongoDBTarget{}, OpenSearch: &benchv1.OpenSearchTarget{Nodes: 3}}}}
	for _, s := range []Server{ValkeyServer(run), MySQLServer(run), MongoDBServer(run), OpenSearchServer(run)} {
		sts := s.StatefulSet()
		validName(t, sts.Name, MaxServerNameLength)
		svcs := s.Services()
		if svcs[0].Name == svcs[1].Name {
			t.Errorf("client and headless Service share %q", svcs[0].Name)
		}
		for _, svc := range svcs {
			validName(t, svc.Name, MaxNameLength)
		}
	}
	for _, name := range []string{PrepareJobName(run), MeasureJobName(run, 15, 100), FilesConfigMapName(run), ResultsConfigMapName(run),
		PostgresClusterName(run), CredentialsSecretName(run, "opensearch"), ClientTLSSecretName(run, "mysql")} {
		validName(t, name, MaxNameLength)
	}
}
