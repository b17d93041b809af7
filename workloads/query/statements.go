package query

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// Statement is one SQL statement of a queries file or a prepare script.
type Statement struct {
	// Name is what a `-- name: X` comment before the statement says, or
	// Q1, Q2, … by position.
	Name string
	SQL  string
}

// Dialect is what the statement splitter must know of a server's SQL.
type Dialect struct {
	// BackslashEscapes: a backslash escapes the next character inside a
	// quoted string (ClickHouse, MySQL); PostgreSQL's standard strings
	// have none, but its E'…' strings do.
	BackslashEscapes bool
	// DollarQuotes: PostgreSQL's $tag$…$tag$ strings.
	DollarQuotes bool
}

var (
	nameComment = regexp.MustCompile(`^--\s*name:\s*(\S+)\s*$`)
	queryName   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)
	dollarTag   = regexp.MustCompile(`^\$([A-Za-z_][A-Za-z0-9_]*)?\$`)
)

// ParseQueries reads a queries file: statements ended by semicolons, each
// named by a `-- name: X` comment line before it or Q<position>. Names
// must be unique and fit the API's NamedQuery.name.
func ParseQueries(text string, d Dialect) ([]Statement, error) {
	stmts, err := Split(text, d)
	if err != nil {
		return nil, err
	}
	if len(stmts) == 0 {
		return nil, fmt.Errorf("no statement: a query is SQL ended by a semicolon")
	}
	seen := map[string]bool{}
	for i := range stmts {
		if stmts[i].Name == "" {
			stmts[i].Name = "Q" + strconv.Itoa(i+1)
		}
		switch name := stmts[i].Name; {
		case !queryName.MatchString(name):
			return nil, fmt.Errorf("query %d: name %q is not letters, digits and _.- (at most 63, beginning with a letter or digit)", i+1, name)
		case seen[name]:
			return nil, fmt.Errorf("query %d: name %q is used twice", i+1, name)
		}
		seen[stmts[i].Name] = true
	}
	return stmts, nil
}

// Split cuts text into statements at the semicolons outside quotes and
// comments. A statement's text starts at its first token: the comments
// before it are dropped, a `-- name: X` among them naming it. A last
// statement without a semicolon counts; empty ones do not.
func Split(text string, d Dialect) ([]Statement, error) {
	s := splitter{text: text, d: d}
	return s.run()
}

type splitter struct {
	text  string
	d     Dialect
	out   []Statement
	name  string
	start int // of the current statement's first token; -1 before it
}

func (s *splitter) run() ([]Statement, error) {
	s.start = -1
	t := s.text
	for i := 0; i < len(t); {
		c := t[i]
		switch {
		case c == '-' && strings.HasPrefix(t[i:], "--"):
			end := lineEnd(t, i)
			if s.start < 0 {
				if m := nameComment.FindStringSubmatch(strings.TrimRight(t[i:end], "\r")); m != nil {
					s.name = m[1]
				}
			}
			i = end
		case c == '/' && strings.HasPrefix(t[i:], "/*"):
			end := strings.Index(t[i+2:], "*/")
			if end < 0 {
				return nil, s.errorAt(i, "a /* comment is not closed")
			}
			i += end + 4
		case c == '\'' || c == '"' || c == '`':
			s.begin(i)
			escapes := s.d.BackslashEscapes || (c == '\'' && i > 0 && (t[i-1] == 'E' || t[i-1] == 'e') && s.d.DollarQuotes)
			end, ok := quoteEnd(t, i, escapes)
			if !ok {
				return nil, s.errorAt(i, fmt.Sprintf("a %c quote is not closed", c))
			}
			i = end
		case c == '$' && s.d.DollarQuotes && dollarTag.MatchString(t[i:]) && (i == 0 || !isWordByte(t[i-1])):
			s.begin(i)
			tag := dollarTag.FindString(t[i:])
			end := strings.Index(t[i+len(tag):], tag)
			if end < 0 {
				return nil, s.errorAt(i, "a "+tag+" string is not closed")
			}
			i += len(tag) + end + len(tag)
		case c == ';':
			s.flush(i)
			i++
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		default:
			s.begin(i)
			i++
		}
	}
	s.flush(len(t))
	return s.out, nil
}

func (s *splitter) begin(i int) {
	if s.start < 0 {
		s.start = i
	}
}

func (s *splitter) flush(end int) {
	if s.start >= 0 {
		s.out = append(s.out, Statement{Name: s.name, SQL: strings.TrimSpace(s.text[s.start:end])})
	}
	s.start, s.name = -1, ""
}

func (s *splitter) errorAt(i int, what string) error {
	line := 1 + strings.Count(s.text[:i], "\n")
	return fmt.Errorf("line %d: %s", line, what)
}

// quoteEnd returns the index after the quote that closes the one at i; a
// doubled quote is one quote character inside.
func quoteEnd(t string, i int, backslash bool) (int, bool) {
	q := t[i]
	for j := i + 1; j < len(t); j++ {
		switch {
		case backslash && t[j] == '\\':
			j++
		case t[j] == q && j+1 < len(t) && t[j+1] == q:
			j++
		case t[j] == q:
			return j + 1, true
		}
	}
	return 0, false
}

func lineEnd(t string, i int) int {
	if n := strings.IndexByte(t[i:], '\n'); n >= 0 {
		return i + n
	}
	return len(t)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// DialectOf is how statements of a driver's server are split.
func DialectOf(d benchv1.QueryDriver) Dialect {
	if d == benchv1.QueryDriverPostgres {
		return Dialect{DollarQuotes: true}
	}
	return Dialect{BackslashEscapes: true}
}
