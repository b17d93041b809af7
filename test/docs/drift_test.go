package docs

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

const root = "../.."

// devDocs are the docs for people who change the project rather than use
// it: they may name issues and commits.
var devDocs = map[string]bool{"docs/development.md": true, "docs/release.md": true}

// docFile is a Markdown file of the documentation, by its path from the
// repository's root.
type docFile struct {
	path  string
	lines []string
}

// docFiles are the README, every Markdown file under docs/ and the chart's.
func docFiles(t *testing.T) []docFile {
	t.Helper()
	paths := []string{"README.md", "charts/dbperf-operator/README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			paths = append(paths, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	var out []docFile
	for _, p := range paths {
		out = append(out, docFile{path: p, lines: readFile(t, filepath.Join(root, p))})
	}
	if len(out) < 10 {
		t.Fatalf("found only %d documentation files", len(out))
	}
	return out
}

// prose is the file's text outside fenced code blocks, and code its text
// inside them.
func (f docFile) prose() (prose, code []string) {
	fenced := false
	for _, l := range f.lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			code = append(code, l)
		} else {
			prose = append(prose, l)
		}
	}
	return prose, code
}

// commandTexts are the places of a file where a command may be written:
// its code spans and the lines of its code blocks.
func (f docFile) commandTexts() []string {
	prose, code := f.prose()
	out := code
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(strings.Join(prose, "\n"), -1) {
		out = append(out, m[1])
	}
	return out
}

func TestEveryMakeTargetNamedExists(t *testing.T) {
	targets := makeTargets(t)
	named := 0
	check := func(where, text string) {
		for _, target := range makeInvocations(text) {
			named++
			if !targets[target] {
				t.Errorf("%s names `make %s`, but the Makefile has no target %s (targets: %v)", where, target, target, sortedKeys(targets))
			}
		}
	}
	for _, f := range docFiles(t) {
		for _, text := range f.commandTexts() {
			check(f.path, text)
		}
	}
	notes := strings.Join(readFile(t, filepath.Join(root, "charts/dbperf-operator/templates/NOTES.txt")), "\n")
	check("the chart's NOTES.txt", notes)
	// The Makefile's and the scripts' messages: the commands they quote.
	for _, path := range append([]string{"Makefile", ".ci/run"}, globRepo(t, "hack/*.sh")...) {
		text := strings.Join(readFile(t, filepath.Join(root, path)), "\n")
		for _, m := range regexp.MustCompile("['`]([^'`\n]*make [^'`\n]*)['`]").FindAllStringSubmatch(text, -1) {
			check(path, m[1])
		}
	}
	if named < 20 {
		t.Errorf("found only %d make invocations in the docs: is the test reading them?", named)
	}
}

// makeInvocations are the targets of every `make …` in text: the words
// after make up to the end of the command (options and VAR=value skipped).
func makeInvocations(text string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)(?:^|[\s;&|(])make((?:[ \t]+[^\s#;&|)'"]+)*)`).FindAllStringSubmatch(text, -1) {
		for _, w := range strings.Fields(m[1]) {
			switch {
			case strings.HasPrefix(w, "-"), strings.Contains(w, "="):
			case regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(w):
				out = append(out, w)
			default: // not a target: the command is over
				return out
			}
		}
	}
	return out
}

func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, l := range readFile(t, filepath.Join(root, "Makefile")) {
		if m := regexp.MustCompile(`^([A-Za-z0-9_-]+)\s*:([^=]|$)`).FindStringSubmatch(l); m != nil {
			out[m[1]] = true
		}
	}
	if !out["test"] || !out["demo"] {
		t.Fatalf("the Makefile's targets %v lack test or demo: is the test reading them?", sortedKeys(out))
	}
	return out
}

func TestEveryPluginCommandNamedExists(t *testing.T) {
	cmds := pluginCommands(t)
	named := 0
	for _, f := range docFiles(t) {
		for _, text := range f.commandTexts() {
			for _, m := range regexp.MustCompile(`kubectl dbperf ([a-z][a-z-]*)`).FindAllStringSubmatch(text, -1) {
				named++
				if !cmds[m[1]] {
					t.Errorf("%s names `kubectl dbperf %s`, which the plugin does not have (its commands: %v)", f.path, m[1], sortedKeys(cmds))
				}
			}
		}
	}
	if named < 10 {
		t.Errorf("found only %d kubectl dbperf commands in the docs: is the test reading them?", named)
	}
}

// pluginCommands are the names of cmd/kubectl-dbperf's commands (the first
// field of each entry of its commands table), and help.
func pluginCommands(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "cmd/kubectl-dbperf/main.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{"help": true}
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Names) != 1 || spec.Names[0].Name != "commands" || len(spec.Values) != 1 {
			return true
		}
		for _, e := range spec.Values[0].(*ast.CompositeLit).Elts {
			if entry, ok := e.(*ast.CompositeLit); ok && len(entry.Elts) > 0 {
				out[stringValue(entry.Elts[0])] = true
			}
		}
		return false
	})
	if len(out) < 5 {
		t.Fatalf("found only %v as the plugin's commands: is the test reading cmd/kubectl-dbperf's table?", sortedKeys(out))
	}
	return out
}

var markdownLink = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)

// Every relative link of the docs reaches a file or directory of the
// repository, and an anchor a heading or an explicit anchor of its page.
func TestEveryRelativeLinkResolves(t *testing.T) {
	anchors := map[string]map[string]bool{}
	files := docFiles(t)
	for _, f := range files {
		anchors[f.path] = pageAnchors(f.lines)
	}
	checked := 0
	for _, f := range files {
		prose, _ := f.prose()
		text := regexp.MustCompile("`[^`]*`").ReplaceAllString(strings.Join(prose, "\n"), "")
		for _, m := range markdownLink.FindAllStringSubmatch(text, -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(link, "#")
			target := f.path
			if path != "" {
				target = filepath.Clean(filepath.Join(filepath.Dir(f.path), path))
			}
			if _, err := os.Stat(filepath.Join(root, target)); err != nil {
				t.Errorf("%s links to %s: %s does not exist", f.path, link, target)
				continue
			}
			if anchor == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			if a, ok := anchors[target]; ok && !a[anchor] {
				t.Errorf("%s links to %s: %s has no heading or anchor #%s", f.path, link, target, anchor)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked only %d relative links: is the test reading them?", checked)
	}
}

// notRepoPaths are words of the docs that look like paths of the repository
// and are not: another project's files and a unit.
var notRepoPaths = map[string]bool{
	"config/generic.xml": true, // HammerDB's own configuration (docs/workloads/hammerdb.md)
	"docs/s":             true, // documents per second
}

// Every path of the repository a doc names in its text — config/samples/…,
// hack/….sh, test/… — exists, from the repository's root or the doc's
// directory; a path with a placeholder (<run>, *, …) is a pattern.
func TestEveryRepositoryPathNamedExists(t *testing.T) {
	top := "api|charts|cmd|config|controllers|docs|hack|internal|test|workloads"
	path := regexp.MustCompile(`(?:^|[\s(\[` + "`" + `'"])((?:` + top + `)/[A-Za-z0-9_./-]*[A-Za-z0-9_/-])`)
	checked := 0
	for _, f := range docFiles(t) {
		prose, code := f.prose()
		for _, l := range append(prose, code...) {
			l = markdownLink.ReplaceAllString(l, "") // links: TestEveryRelativeLinkResolves
			for _, m := range path.FindAllStringSubmatch(l, -1) {
				p := strings.TrimSuffix(m[1], ".")
				rest := l[strings.Index(l, m[1])+len(m[1]):]
				if notRepoPaths[p] || regexp.MustCompile(`^[<*…{$]`).MatchString(rest) {
					continue
				}
				// A Go identifier after a package's path: internal/version.Version.
				if i := strings.LastIndex(p, "."); i > strings.LastIndex(p, "/") && regexp.MustCompile(`^\.[A-Z]`).MatchString(p[i:]) {
					p = p[:i]
				}
				checked++
				if exists(p) || exists(filepath.Join(filepath.Dir(f.path), p)) {
					continue
				}
				t.Errorf("%s names %s, which the repository does not have", f.path, m[1])
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked only %d paths of the repository: is the test reading them?", checked)
	}
}

func exists(p string) bool {
	_, err := os.Stat(filepath.Join(root, p))
	return err == nil
}

// pageAnchors are the anchors GitHub gives a page: one per heading (its
// text lowercased, punctuation dropped, spaces as hyphens, a repeated one
// numbered) and every <a id="…"> or <a name="…">.
func pageAnchors(lines []string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
		}
		for _, m := range regexp.MustCompile(`<a (?:id|name)="([^"]+)"`).FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
		if fenced || headingLevel(l) == 0 {
			continue
		}
		slug := slugify(strings.TrimLeft(l, "# "))
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

func slugify(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// A blank line inside a Markdown table ends it, and the rows after it
// render as a paragraph of pipes; a code block closed by a line with more
// after its backquotes does not close, and swallows the rest of the page.
func TestEveryTableAndCodeBlockIsWhole(t *testing.T) {
	for _, f := range docFiles(t) {
		for i, block := range tableBlocks(f.lines) {
			if len(block.lines) < 2 || !delimiterRow.MatchString(block.lines[1]) {
				t.Errorf("%s:%d: table %d has no header and delimiter row (a blank line splitting a table?): %q",
					f.path, block.start+1, i+1, block.lines[0])
			}
		}
		open := 0
		for i, l := range f.lines {
			fence := strings.TrimSpace(l)
			if !strings.HasPrefix(fence, "```") {
				continue
			}
			if open == 0 {
				open = i + 1
				continue
			}
			if strings.TrimRight(fence, "`") != "" {
				t.Errorf("%s:%d: the code block opened at line %d is closed by %q: a closing fence has nothing after it", f.path, i+1, open, fence)
			}
			open = 0
		}
		if open != 0 {
			t.Errorf("%s:%d: a code block is never closed", f.path, open)
		}
	}
}

// A user's doc says what the product does, not how it got there.
func TestUserDocsNameNoIssueOrCommit(t *testing.T) {
	issue := regexp.MustCompile(`(?i)\bissues? #?\d+`)
	// A hash is a word of its own: not the digits of 5.36870912e+08.
	hash := regexp.MustCompile(`(?:^|[^0-9A-Za-z.])([0-9a-f]{7,40})(?:$|[^0-9A-Za-z+-])`)
	build := regexp.MustCompile(`(?i)\bthis build\b`)
	for _, f := range docFiles(t) {
		if devDocs[f.path] {
			continue
		}
		for i, l := range f.lines {
			for _, m := range issue.FindAllString(l, -1) {
				t.Errorf("%s:%d names %q: a user's doc says what is, not which issue made it", f.path, i+1, m)
			}
			for _, sub := range hash.FindAllStringSubmatch(l, -1) {
				if m := sub[1]; strings.ContainsAny(m, "abcdef") && strings.ContainsAny(m, "0123456789") {
					t.Errorf("%s:%d names what looks like a commit, %q", f.path, i+1, m)
				}
			}
			if build.MatchString(l) {
				t.Errorf("%s:%d says \"this build\": name the version or the date instead", f.path, i+1)
			}
		}
	}
}

// A default a doc quotes — "`field` (default X)", "`field`, default X",
// "`field: X` (default)", "`X` (default)" — is the code's: the CRDs'
// defaults, the chart's values and the API's deadline defaults.
func TestDefaultsQuotedAreTheCodes(t *testing.T) {
	defaults := knownDefaults(t)
	values := map[string]bool{}
	for _, vs := range defaults {
		for _, v := range vs {
			values[v] = true
		}
	}
	// A value is quoted, a number or a duration, a boolean, or an enum's
	// CamelCase word: "(default: a cron trigger is skipped" quotes none.
	named := regexp.MustCompile("`([A-Za-z][A-Za-z0-9.]*)`\\)?[^`()\n]{0,60}?(?:\\(|, )default:?\\s+(`[^`]+`|[0-9][0-9.]*(?: ?[a-z]+\\b)?|true|false|[A-Z][A-Za-z]+)")
	assigned := regexp.MustCompile("`([A-Za-z][A-Za-z0-9.]*): ([^`]+)` \\(default\\)")
	bare := regexp.MustCompile("`([A-Za-z][A-Za-z0-9]*)` \\(default\\)")
	checked := 0
	for _, f := range docFiles(t) {
		if f.path == "docs/api.md" { // generated from the CRDs themselves
			continue
		}
		prose, _ := f.prose()
		text := strings.Join(prose, "\n")
		claim := func(name, value string) {
			want, ok := lookupDefault(defaults, name)
			if !ok {
				return
			}
			checked++
			t.Logf("%s: %s defaults to %s", f.path, name, value)
			got := normalize(value)
			for _, w := range want {
				if w == got {
					return
				}
			}
			t.Errorf("%s says %s defaults to %s; the code's default is %s", f.path, name, value, strings.Join(want, " or "))
		}
		for _, m := range named.FindAllStringSubmatch(text, -1) {
			claim(m[1], m[2])
		}
		for _, m := range assigned.FindAllStringSubmatch(text, -1) {
			claim(m[1], m[2])
		}
		for _, m := range bare.FindAllStringSubmatch(text, -1) {
			if _, isField := lookupDefault(defaults, m[1]); isField {
				continue
			}
			if regexp.MustCompile(`^[A-Z]`).MatchString(m[1]) {
				checked++
				if !values[m[1]] {
					t.Errorf("%s gives `%s` as a default, which no field of the API or the chart has as its default", f.path, m[1])
				}
			}
		}
	}
	if checked < 15 {
		t.Errorf("checked only %d quoted defaults: is the test reading them?", checked)
	}
}

// The chart's README gives every value's default in its table: the same as
// values.yaml's.
func TestChartREADMEDefaultsAreTheValues(t *testing.T) {
	defaults := map[string][]string{}
	raw, err := os.ReadFile(filepath.Join(root, "charts/dbperf-operator/values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	flatten(values, "", func(path, v string) { defaults[path] = append(defaults[path], normalize(v)) })
	table := firstTable(section(readFile(t, filepath.Join(root, "charts/dbperf-operator/README.md")), "## Values"))
	checked := 0
	for _, row := range table[min(2, len(table)):] {
		cells := splitRow(row)
		if len(cells) < 2 {
			continue
		}
		keys, vals := strings.Split(cells[0], " / "), strings.Split(cells[1], " / ")
		if len(keys) != len(vals) {
			continue
		}
		for i, k := range keys {
			k = strings.Trim(k, "`")
			want, ok := defaults[k]
			if !ok || !strings.HasPrefix(vals[i], "`") {
				continue // a default written in words (appVersion), or a list or map
			}
			checked++
			if got := normalize(vals[i]); got != want[0] {
				t.Errorf("the chart's README gives %s the default %s; values.yaml has %s", k, vals[i], want[0])
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked only %d defaults of the chart's README: is the test reading its table?", checked)
	}
}

// lookupDefault finds the defaults of a field named by its path or a
// suffix of it (spec.telemetry.pollInterval, pollInterval).
func lookupDefault(defaults map[string][]string, name string) ([]string, bool) {
	set := map[string]bool{}
	for path, vs := range defaults {
		if path == name || strings.HasSuffix(path, "."+name) {
			for _, v := range vs {
				set[v] = true
			}
		}
	}
	out := sortedKeys(set)
	return out, len(out) > 0
}

// knownDefaults maps field paths to their defaults, normalized: every
// defaulted field of the CRDs, every scalar of the chart's values, and the
// deadlines the API defaults in code.
func knownDefaults(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	add := func(path, v string) { out[path] = append(out[path], normalize(v)) }
	for _, file := range globRepo(t, "config/crd/bases/*.yaml") {
		raw, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			t.Fatal(err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				schemaDefaults(*v.Schema.OpenAPIV3Schema, "", add)
			}
		}
	}
	raw, err := os.ReadFile(filepath.Join(root, "charts/dbperf-operator/values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	flatten(values, "", add)
	for name, d := range map[string]time.Duration{
		"spec.deadlines.podStart": benchv1.DefaultPodStartDeadline, "spec.deadlines.provision": benchv1.DefaultProvisionDeadline,
		"spec.deadlines.collect": benchv1.DefaultCollectDeadline,
	} {
		add(name, d.String())
	}
	if len(out) < 50 {
		t.Fatalf("found only %d defaults: is the test reading the CRDs?", len(out))
	}
	return out
}

func schemaDefaults(s apiextv1.JSONSchemaProps, path string, add func(string, string)) {
	if s.Default != nil && path != "" {
		var v any
		if err := json.Unmarshal(s.Default.Raw, &v); err == nil {
			if _, scalar := v.(map[string]any); !scalar {
				add(path, fmt.Sprint(v))
			}
		}
	}
	for name, p := range s.Properties {
		schemaDefaults(p, strings.TrimPrefix(path+"."+name, "."), add)
	}
	if s.Items != nil && s.Items.Schema != nil {
		schemaDefaults(*s.Items.Schema, path, add)
	}
}

func flatten(v any, path string, add func(string, string)) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			flatten(e, strings.TrimPrefix(path+"."+k, "."), add)
		}
	case []any:
	default:
		if v != nil {
			add(path, fmt.Sprint(v))
		}
	}
}

// normalize writes a default the one way: no quotes or backquotes, a
// duration by Go's spelling (2h0m0s), a number by its value.
func normalize(v string) string {
	v = strings.Trim(strings.TrimSpace(v), "`\"'")
	if d, err := time.ParseDuration(strings.ReplaceAll(v, " ", "")); err == nil && regexp.MustCompile(`[a-z]$`).MatchString(v) {
		return d.String()
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return v
}

func globRepo(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, pattern))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		out = append(out, rel)
	}
	sort.Strings(out)
	return out
}
