package query

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseQueries(t *testing.T) {
	ch, pg := Dialect{BackslashEscapes: true}, Dialect{DollarQuotes: true}
	cases := map[string]struct {
		text    string
		dialect Dialect
		want    []Statement
		err     string
	}{
		"named, with comments and blank lines": {
			text: "-- SSB\n\n-- name: Q1.1\nSELECT 1;\n/* flight 2 */\n-- name: Q2.1\nSELECT 2 -- trailing\nFROM t;\n",
			want: []Statement{{"Q1.1", "SELECT 1"}, {"Q2.1", "SELECT 2 -- trailing\nFROM t"}},
		},
		"ClickBench: one per line, unnamed": {
			text: "SELECT COUNT(*) FROM hits;\nSELECT COUNT(*) FROM hits WHERE AdvEngineID <> 0;\n",
			want: []Statement{{"Q1", "SELECT COUNT(*) FROM hits"}, {"Q2", "SELECT COUNT(*) FROM hits WHERE AdvEngineID <> 0"}},
		},
		"a last statement without a semicolon": {
			text: "SELECT 1;\nSELECT 2\n",
			want: []Statement{{"Q1", "SELECT 1"}, {"Q2", "SELECT 2"}},
		},
		"semicolons in quotes and comments": {
			text:    "SELECT ';', \"a;b\", `c;d` /* ; */ FROM t -- ;\n;SELECT 'it''s;';",
			dialect: ch,
			want:    []Statement{{"Q1", "SELECT ';', \"a;b\", `c;d` /* ; */ FROM t -- ;"}, {"Q2", "SELECT 'it''s;'"}},
		},
		"backslash escapes of ClickHouse and MySQL": {
			text:    `SELECT '\';' FROM t; SELECT 2;`,
			dialect: ch,
			want:    []Statement{{"Q1", `SELECT '\';' FROM t`}, {"Q2", "SELECT 2"}},
		},
		"PostgreSQL's standard strings end at a backslash": {
			text:    `SELECT 'C:\'; SELECT 2;`,
			dialect: pg,
			want:    []Statement{{"Q1", `SELECT 'C:\'`}, {"Q2", "SELECT 2"}},
		},
		"PostgreSQL's dollar quotes": {
			text:    "DO $body$ BEGIN PERFORM 1; END $body$; SELECT $1;",
			dialect: pg,
			want:    []Statement{{"Q1", "DO $body$ BEGIN PERFORM 1; END $body$"}, {"Q2", "SELECT $1"}},
		},
		"a name comment inside a statement names nothing": {
			text: "-- name: A\nSELECT 1\n-- name: B\n;\nSELECT 2;",
			want: []Statement{{"A", "SELECT 1\n-- name: B"}, {"Q2", "SELECT 2"}},
		},
		"empty statements are skipped": {
			text: ";;\n-- name: only\nSELECT 1;;",
			want: []Statement{{"only", "SELECT 1"}},
		},
		"an unclosed quote":        {text: "SELECT 1;\nSELECT 'oops;\n", err: "line 2: a ' quote is not closed"},
		"an unclosed comment":      {text: "SELECT /* 1;", err: "line 1: a /* comment is not closed"},
		"no statement":             {text: "-- nothing\n", err: "no statement"},
		"a duplicate name":         {text: "-- name: A\nSELECT 1;\n-- name: A\nSELECT 2;", err: `name "A" is used twice`},
		"a name the API takes not": {text: "-- name: Q/1\nSELECT 1;", err: `name "Q/1" is not`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseQueries(tc.text, tc.dialect)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("statements (-want +got):\n%s", diff)
			}
		})
	}
}

// The examples are what samples and the real tests use: 13 named queries each.
func TestExamplesParse(t *testing.T) {
	for file, d := range map[string]Dialect{"ssb-clickhouse.sql": DialectOf("clickhouse"), "ssb.sql": DialectOf("postgres")} {
		text := readFile(t, "examples/"+file)
		stmts, err := ParseQueries(text, d)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var names []string
		for _, s := range stmts {
			names = append(names, s.Name)
		}
		want := "Q1.1 Q1.2 Q1.3 Q2.1 Q2.2 Q2.3 Q3.1 Q3.2 Q3.3 Q3.4 Q4.1 Q4.2 Q4.3"
		if got := strings.Join(names, " "); got != want {
			t.Errorf("%s: queries %s, want %s", file, got, want)
		}
	}
}
