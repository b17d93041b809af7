package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

const crds = "../../config/crd/bases"

func rendered(t *testing.T) string {
	t.Helper()
	b, err := render(crds)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTheReferenceIsCurrent(t *testing.T) {
	committed, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, []byte(rendered(t))) {
		t.Error("docs/api.md is not what the CRDs give: run `make manifests` (go run ./hack/apidocs)")
	}
}

// The run spec is the largest type and is embedded three times (a
// comparison's template, a schedule's run template and its comparison
// template's): its fields are listed once, under BenchmarkRun.
func TestEachTypeIsRenderedOnce(t *testing.T) {
	doc := rendered(t)
	row := regexp.MustCompile("(?m)^\\| (?:<a id=\"[^\"]+\"></a>)?`([^`]+)`")
	counts := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		counts[m[1]]++
	}
	for _, suffix := range []string{".target.valkey.image", ".workload.pgbench.clients", ".validity.maxErrorPercent", ".criteria.alpha"} {
		n := 0
		for path, c := range counts {
			if strings.HasSuffix(path, suffix) {
				n += c
			}
		}
		if n != 1 {
			t.Errorf("a field ending %s is rendered %d times, want once", suffix, n)
		}
	}
	for _, holder := range []string{"`.spec.template`", "`.spec.runTemplate.spec`"} {
		line := lineWith(doc, "| "+holder+" ")
		if !strings.Contains(line, "(#benchmarkrun-spec)") {
			t.Errorf("the row of %s does not link to BenchmarkRun's spec:\n%s", holder, line)
		}
	}
	if len(doc) > 300_000 {
		t.Errorf("docs/api.md is %d bytes: is a type rendered more than once?", len(doc))
	}
}

func TestEveryLinkHasItsAnchor(t *testing.T) {
	doc := rendered(t)
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([^"]+)"></a>`).FindAllStringSubmatch(doc, -1) {
		if ids[m[1]] {
			t.Errorf("the anchor %s is declared twice", m[1])
		}
		ids[m[1]] = true
	}
	links := regexp.MustCompile(`\]\(#([^)]+)\)`).FindAllStringSubmatch(doc, -1)
	if len(links) == 0 {
		t.Fatal("no reference in the rendered API: is every type rendered in full again?")
	}
	for _, m := range links {
		if !ids[m[1]] {
			t.Errorf("a reference links to #%s, which no anchor declares", m[1])
		}
	}
}

// criteria.alpha is above 0 and below 0.5 (exclusive bounds in the CRD).
func TestExclusiveBoundsAreRenderedExclusive(t *testing.T) {
	line := lineWith(rendered(t), "| `.spec.criteria.alpha` ")
	if !strings.Contains(line, "Limits: > 0, < 0.5.") {
		t.Errorf("alpha's limits are not rendered exclusive:\n%s", line)
	}
}

func lineWith(doc, prefix string) string {
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
