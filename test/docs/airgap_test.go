package docs

import (
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/version"
)

const installPath = "../../docs/install.md"

// The default images docs/install.md lists for air-gapped installs are
// the code's, each beside the field (or the tool) it is the default of,
// and no other: the manager's and the runner's at this version, every
// registered tool's, every target field's.
func TestAirGapListsEveryDefaultImage(t *testing.T) {
	table := firstTable(section(section(readFile(t, installPath), "## Air-gapped installs"), "### Default images"))
	if len(table) < 3 {
		t.Fatal(`docs/install.md has no table under "## Air-gapped installs" / "### Default images"`)
	}
	rows := map[string]string{} // image → its "Default of" cell
	for _, row := range table[2:] {
		cells := splitRow(row)
		if len(cells) < 2 {
			t.Errorf("row %q: want an image and what it is the default of", row)
			continue
		}
		img := strings.Trim(cells[0], "`")
		if _, dup := rows[img]; dup {
			t.Errorf("%s is listed twice", img)
		}
		rows[img] = cells[1]
	}
	want := map[string]string{ // image → what its cell must name
		"ghcr.io/dbperf-io/dbperf-operator:" + version.Version: "the manager",
		"ghcr.io/dbperf-io/dbperf-runner:" + version.Version:   "`--runner-image`",
	}
	for _, tl := range registeredTools(t) {
		if tl.image != "" {
			want[tl.image] = "`spec.workload.image` with `" + tl.field + "`"
		}
	}
	for field, img := range specs.DefaultTargetImages() {
		want[img] = "`" + field + "`"
	}
	for img, names := range want {
		cell, ok := rows[img]
		switch {
		case !ok:
			t.Errorf("docs/install.md's default images do not list %s (the default of %s)", img, names)
		case !strings.Contains(cell, names):
			t.Errorf("docs/install.md lists %s as the default of %q; want it to name %s", img, cell, names)
		}
	}
	for img := range rows {
		if _, ok := want[img]; !ok {
			t.Errorf("docs/install.md lists %s, which is no default of the code", img)
		}
	}
}

// The remap examples of docs/install.md are what the manager does.
func TestAirGapRemapExamplesAreTheCodes(t *testing.T) {
	lines := section(section(readFile(t, installPath), "## Air-gapped installs"), "### Remapping the default images")
	checked := 0
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		cells := splitRow(l)
		if len(cells) != 2 {
			continue
		}
		from, to := strings.Trim(cells[0], "`"), strings.Trim(cells[1], "`")
		if got := specs.RemapImage(from, "registry.internal:5000/mirror"); got != to {
			t.Errorf("docs/install.md remaps %s to %s; the manager to %s", from, to, got)
		}
		checked++
	}
	if checked < 3 {
		t.Errorf("checked %d remap examples: is the test reading the table?", checked)
	}
}
