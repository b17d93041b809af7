package compare

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// EnvDiff is one fact of the environment that differs between the
// variants: each side's values over its runs (several when its runs did
// not all see the same).
type EnvDiff struct {
	// What names the fact: "target node instance type", "image target",
	// "server version", ...
	What      string   `json:"what"`
	Baseline  []string `json:"baseline"`
	Candidate []string `json:"candidate"`
}

// envFacts are a run's facts of its environment, by name: its nodes' by
// the roles they carried (instance type, CPU model, kernel, OS image,
// architecture, pool, zone), its images by role, the versions, its
// volumes' storage classes, and the server's version and the tool's as
// the tool reported them.
func envFacts(r Run) map[string][]string {
	facts := map[string][]string{}
	add := func(what, v string) {
		if v != "" && !slices.Contains(facts[what], v) {
			facts[what] = append(facts[what], v)
		}
	}
	if e := r.Environment; e != nil {
		for _, n := range e.Nodes {
			for _, role := range n.Roles {
				add(role+" node instance type", n.InstanceType)
				add(role+" node CPU model", n.CPUModel)
				add(role+" node kernel", n.KernelVersion)
				add(role+" node OS image", n.OSImage)
				add(role+" node architecture", n.Arch)
				add(role+" node pool", n.Pool)
				add(role+" node zone", n.Zone)
				if n.AllocatableCPU != nil {
					add(role+" node allocatable CPU", n.AllocatableCPU.String())
				}
			}
		}
		for role, img := range e.Images {
			add("image "+role, img)
		}
		for _, v := range e.Volumes {
			add("volume "+v.Purpose+" storage class", v.StorageClassName)
		}
		add("Kubernetes version", e.KubernetesVersion)
		add("operator version", e.OperatorVersion)
	}
	for _, m := range r.Measurements {
		if m.Result == nil {
			continue
		}
		add("tool version", m.Result.ToolVersion)
		add("server version", m.Result.Parameters["serverVersion"])
		for name, v := range m.Result.ServerSettings {
			add(settingPrefix+name, v)
		}
		if len(m.Result.ServerSettings) > 0 {
			add(settingsRead, "yes")
		}
	}
	return facts
}

// settingPrefix names a server setting's fact; settingsRead marks a side
// whose servers' settings were read: a setting it does not list is at
// its built-in default there.
const (
	settingPrefix = "server setting "
	settingsRead  = "server settings read"
)

// environmentDiff lists the facts whose values differ between the sides,
// in name order; facts a side does not know are left out (an older run,
// a node without the label).
func environmentDiff(baseline, candidate Side) []EnvDiff {
	gather := func(s Side) map[string][]string {
		all := map[string][]string{}
		for _, r := range s.Runs {
			for what, vs := range envFacts(r) {
				for _, v := range vs {
					if !slices.Contains(all[what], v) {
						all[what] = append(all[what], v)
					}
				}
			}
		}
		for _, vs := range all {
			sort.Strings(vs)
		}
		return all
	}
	b, c := gather(baseline), gather(candidate)
	// A setting one side lists and the other does not is at its default
	// there, when that side's settings were read at all.
	for _, pair := range [][2]map[string][]string{{b, c}, {c, b}} {
		from, to := pair[0], pair[1]
		if to[settingsRead] == nil {
			continue
		}
		for what := range from {
			if strings.HasPrefix(what, settingPrefix) && to[what] == nil {
				to[what] = []string{"(default)"}
			}
		}
	}
	var out []EnvDiff
	for what, bv := range b {
		cv, ok := c[what]
		if !ok || slices.Equal(bv, cv) || what == settingsRead {
			continue
		}
		out = append(out, EnvDiff{What: what, Baseline: bv, Candidate: cv})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].What < out[j].What })
	return out
}

// envLine is the summary's line of what differed, the first few facts.
func envLine(diffs []EnvDiff) string {
	if len(diffs) == 0 {
		return ""
	}
	var parts []string
	for i, d := range diffs {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("… %d more", len(diffs)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s", d.What, shorten(strings.Join(d.Baseline, ", "), 40), shorten(strings.Join(d.Candidate, ", "), 40)))
	}
	return fmt.Sprintf("What differed (%d): %s", len(diffs), strings.Join(parts, "; "))
}
