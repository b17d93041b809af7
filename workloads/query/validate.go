package query

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

var (
	settingName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]{0,127}$`)
	settingValue = regexp.MustCompile(`^[A-Za-z0-9_.:/+ -]{0,256}$`)
	tableName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]{0,127}$`)
)

// Validate re-checks what the schema checks and what it cannot: that an
// inline query is one statement and that the prepare script splits into
// statements (its quotes and comments closed).
func (Query) Validate(spec *benchv1.WorkloadSpec, path *field.Path) field.ErrorList {
	q := spec.QueryBench
	p := path.Child("queryBench")
	if q == nil {
		return field.ErrorList{field.Required(p, "query settings are required")}
	}
	var errs field.ErrorList
	switch q.Driver {
	case benchv1.QueryDriverClickHouse, benchv1.QueryDriverPostgres, benchv1.QueryDriverMySQL:
	default:
		errs = append(errs, field.NotSupported(p.Child("driver"), q.Driver,
			[]benchv1.QueryDriver{benchv1.QueryDriverClickHouse, benchv1.QueryDriverPostgres, benchv1.QueryDriverMySQL}))
	}
	errs = append(errs, validateQueries(q, p)...)
	if q.RunsPerQuery < 0 || q.RunsPerQuery > 100 {
		errs = append(errs, field.Invalid(p.Child("runsPerQuery"), q.RunsPerQuery, "must be between 1 and 100"))
	}
	if t := q.QueryTimeout; t != nil && (t.Duration < time.Second || t.Duration > 24*time.Hour) {
		errs = append(errs, field.Invalid(p.Child("queryTimeout"), t.Duration.String(), "must be a duration between 1s and 24h"))
	}
	for k, v := range q.Settings {
		if !settingName.MatchString(k) {
			errs = append(errs, field.Invalid(p.Child("settings").Key(k), k, "setting names are letters, digits, underscores and dots"))
		}
		if !settingValue.MatchString(string(v)) {
			errs = append(errs, field.Invalid(p.Child("settings").Key(k), v, "setting values are letters, digits, spaces and _.:/+-"))
		}
	}
	return append(errs, validatePrepare(q, p.Child("prepare"))...)
}

func validateQueries(q *benchv1.QueryWorkload, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case len(q.Queries) == 0 && q.QueriesConfigMap == nil:
		return field.ErrorList{field.Required(p.Child("queries"), "queries inline or queriesConfigMap")}
	case len(q.Queries) > 0 && q.QueriesConfigMap != nil:
		return field.ErrorList{field.Forbidden(p.Child("queriesConfigMap"), "exactly one of queries or queriesConfigMap must be set")}
	case q.QueriesConfigMap != nil:
		if q.QueriesConfigMap.Name == "" || q.QueriesConfigMap.Key == "" {
			errs = append(errs, field.Required(p.Child("queriesConfigMap"), "the ConfigMap's name and key"))
		}
		return errs
	}
	seen := map[string]bool{}
	for i, nq := range q.Queries {
		ip := p.Child("queries").Index(i)
		switch {
		case !queryName.MatchString(nq.Name):
			errs = append(errs, field.Invalid(ip.Child("name"), nq.Name, "letters, digits and _.- (at most 63, beginning with a letter or digit)"))
		case seen[nq.Name]:
			errs = append(errs, field.Duplicate(ip.Child("name"), nq.Name))
		}
		seen[nq.Name] = true
		stmts, err := Split(nq.SQL, DialectOf(q.Driver))
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(ip.Child("sql"), nq.SQL, err.Error()))
		case len(stmts) != 1:
			errs = append(errs, field.Invalid(ip.Child("sql"), nq.SQL,
				fmt.Sprintf("must be one statement, found %d: each timed query is its own entry", len(stmts))))
		}
	}
	return errs
}

func validatePrepare(q *benchv1.QueryWorkload, p *field.Path) field.ErrorList {
	prep := q.Prepare
	if prep == nil {
		return nil
	}
	var errs field.ErrorList
	if prep.Script != "" {
		if _, err := Split(prep.Script, DialectOf(q.Driver)); err != nil {
			errs = append(errs, field.Invalid(p.Child("script"), truncate(prep.Script), err.Error()))
		}
	}
	if s := prep.ScriptConfigMap; s != nil && (s.Name == "" || s.Key == "") {
		errs = append(errs, field.Required(p.Child("scriptConfigMap"), "the ConfigMap's name and key"))
	}
	for i, l := range prep.Loads {
		lp := p.Child("loads").Index(i)
		if !tableName.MatchString(l.Table) {
			errs = append(errs, field.Invalid(lp.Child("table"), l.Table, "a table name: letters, digits, underscores and a dot before a table of another database"))
		}
		switch l.Format {
		case "", benchv1.QueryLoadCSV, benchv1.QueryLoadTSV:
		default:
			errs = append(errs, field.NotSupported(lp.Child("format"), l.Format, []benchv1.QueryLoadFormat{benchv1.QueryLoadCSV, benchv1.QueryLoadTSV}))
		}
		switch {
		case (l.URL == "") == (l.Claim == nil):
			errs = append(errs, field.Invalid(lp, l.Table, "exactly one of url or claim must be set"))
		case l.URL != "" && !strings.HasPrefix(l.URL, "http://") && !strings.HasPrefix(l.URL, "https://"):
			errs = append(errs, field.Invalid(lp.Child("url"), RedactURL(l.URL), "an http or https URL"))
		case l.Claim != nil && (l.Claim.ClaimName == "" || l.Claim.Path == "" || strings.HasPrefix(l.Claim.Path, "/") ||
			strings.Contains("/"+l.Claim.Path+"/", "/../")):
			errs = append(errs, field.Invalid(lp.Child("claim", "path"), l.Claim.Path, "a relative path inside the volume, without .."))
		}
	}
	for i, a := range prep.Command {
		if a == "" && i == 0 {
			errs = append(errs, field.Required(p.Child("command").Index(0), "the generator's program"))
		}
	}
	return errs
}

// trimStatement drops a statement's surrounding space and final semicolons.
func trimStatement(sql string) string {
	s := strings.TrimSpace(sql)
	for strings.HasSuffix(s, ";") {
		s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	}
	return s
}

func truncate(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

// RedactURL drops a URL's query and credentials, which may hold a token.
func RedactURL(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		if at := strings.IndexByte(rest, '@'); at >= 0 && at < strings.IndexByte(rest+"/", '/') {
			rest = rest[at+1:]
		}
		s = scheme + "://" + rest
	}
	return s
}
