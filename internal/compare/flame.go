package compare

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
)

// FlameDiff is one step's on-CPU profiles of both variants, pooled over
// their repetitions, as the server's CPU time per transaction of each
// folded stack: what a differential flame graph is drawn from.
type FlameDiff struct {
	Step string `json:"step,omitempty"`
	// Stacks are the stacks either side sampled (the largest
	// maxFlameStacks by their larger side), each side's CPU ms per
	// transaction.
	Stacks []FlameStack `json:"stacks"`
	// Samples each side's profiles hold, over how many repetitions.
	BaselineSamples      int `json:"baselineSamples"`
	CandidateSamples     int `json:"candidateSamples"`
	BaselineRepetitions  int `json:"baselineRepetitions"`
	CandidateRepetitions int `json:"candidateRepetitions"`
}

// FlameStack is one folded stack ("process;outermost;...;innermost").
type FlameStack struct {
	Stack     string `json:"stack"`
	Baseline  Num    `json:"baseline"`
	Candidate Num    `json:"candidate"`
}

// maxFlameStacks is how many stacks a report keeps of a step's profiles.
const maxFlameStacks = 600

// flames pools each step's profiles per side: a stack's CPU time over
// every repetition's window divided by the transactions of those windows
// (so that a variant at another throughput compares per unit of work).
func flames(rep *Report, baseline, candidate Side, o Options) []FlameDiff {
	steps, base, cand := diagnosedSteps(rep, baseline, candidate, o)
	var out []FlameDiff
	for _, step := range steps {
		b, c := base[step], cand[step]
		if b == nil || c == nil {
			continue
		}
		bs, bn, br := b.pooledStacks()
		cs, cn, cr := c.pooledStacks()
		if br == 0 || cr == 0 {
			continue
		}
		names := map[string]bool{}
		for s := range bs {
			names[s] = true
		}
		for s := range cs {
			names[s] = true
		}
		f := FlameDiff{Step: step, BaselineSamples: bn, CandidateSamples: cn, BaselineRepetitions: br, CandidateRepetitions: cr}
		if len(steps) == 1 {
			f.Step = ""
		}
		for s := range names {
			f.Stacks = append(f.Stacks, FlameStack{Stack: s, Baseline: Num(bs[s]), Candidate: Num(cs[s])})
		}
		sort.Slice(f.Stacks, func(i, j int) bool {
			a, b := math.Max(float64(f.Stacks[i].Baseline), float64(f.Stacks[i].Candidate)), math.Max(float64(f.Stacks[j].Baseline), float64(f.Stacks[j].Candidate))
			if a != b {
				return a > b
			}
			return f.Stacks[i].Stack < f.Stacks[j].Stack
		})
		if len(f.Stacks) > maxFlameStacks {
			f.Stacks = f.Stacks[:maxFlameStacks]
		}
		out = append(out, f)
	}
	return out
}

// pooledStacks is the side's CPU ms per transaction of each stack over
// the repetitions that hold a profile, their samples and their count.
func (s *diagSide) pooledStacks() (map[string]float64, int, int) {
	ms := map[string]float64{}
	var tx float64
	samples, reps := 0, 0
	for _, d := range s.reps {
		if d == nil || d.Profile == nil || d.Transactions <= 0 || len(d.Profile.Stacks) == 0 {
			continue
		}
		reps++
		tx += d.Transactions
		samples += d.Profile.Samples
		for _, st := range d.Profile.Stacks {
			ms[st.Stack] += d.Profile.Millis(st.Samples)
		}
	}
	if tx > 0 {
		for k := range ms {
			ms[k] /= tx
		}
	}
	return ms, samples, reps
}

// flameNode is a frame in the merged tree of both sides' stacks: its
// inclusive time per transaction on each side.
type flameNode struct {
	name     string
	a, b     float64
	children []*flameNode
	index    map[string]*flameNode
}

func (n *flameNode) child(name string) *flameNode {
	if c, ok := n.index[name]; ok {
		return c
	}
	c := &flameNode{name: name, index: map[string]*flameNode{}}
	n.index[name] = c
	n.children = append(n.children, c)
	return c
}

func flameTree(f FlameDiff) *flameNode {
	root := &flameNode{name: "all", index: map[string]*flameNode{}}
	for _, s := range f.Stacks {
		a, b := float64(s.Baseline), float64(s.Candidate)
		root.a += a
		root.b += b
		n := root
		for _, frame := range strings.Split(s.Stack, ";") {
			n = n.child(frame)
			n.a += a
			n.b += b
		}
	}
	var order func(*flameNode)
	order = func(n *flameNode) {
		sort.Slice(n.children, func(i, j int) bool { return n.children[i].name < n.children[j].name })
		for _, c := range n.children {
			order(c)
		}
	}
	order(root)
	return root
}

// FlameSVG draws the differential flame graph of a step (an icicle: the
// outermost frame on top): with candidateShape, each frame as wide as the
// candidate's CPU time per transaction in it and coloured by how it
// changed against the baseline (red grew, blue shrank, the deeper the
// larger the change against the largest); otherwise the baseline's shape
// coloured the other way (what shrank or vanished, which the candidate's
// shape cannot show). Self-contained SVG, every frame with its figures in
// its title.
func FlameSVG(f FlameDiff, baseline, candidate string, candidateShape bool) string {
	const width, rowH, minW = 1080.0, 16.0, 0.8
	root := flameTree(f)
	shape := func(n *flameNode) float64 {
		if candidateShape {
			return n.b
		}
		return n.a
	}
	if shape(root) <= 0 {
		return ""
	}
	var maxDelta float64
	var depth int
	var walk func(n *flameNode, d int)
	walk = func(n *flameNode, d int) {
		maxDelta = math.Max(maxDelta, math.Abs(n.b-n.a))
		depth = max(depth, d)
		for _, c := range n.children {
			walk(c, d+1)
		}
	}
	walk(root, 0)
	scale := width / shape(root)
	var body strings.Builder
	var draw func(n *flameNode, x float64, d int)
	draw = func(n *flameNode, x float64, d int) {
		w := shape(n) * scale
		if w < minW {
			return
		}
		delta := n.b - n.a
		if !candidateShape {
			delta = -delta
		}
		fill := flameColour(delta, maxDelta)
		title := fmt.Sprintf("%s — %s %.4g ms/tx, %s %.4g ms/tx (%+.4g)", n.name, baseline, n.a, candidate, n.b, n.b-n.a)
		y := float64(d) * rowH
		fmt.Fprintf(&body, `<g><title>%s</title><rect x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="%s" stroke="#fff" stroke-width="0.5"/>`,
			html.EscapeString(title), x, y, w, rowH-1, fill)
		if chars := int((w - 4) / 6.5); chars >= 3 {
			label := n.name
			if len(label) > chars {
				label = label[:chars-1] + "…"
			}
			fmt.Fprintf(&body, `<text x="%.1f" y="%.0f" class="fl">%s</text>`, x+2, y+rowH-5, html.EscapeString(label))
		}
		body.WriteString("</g>")
		cx := x
		for _, c := range n.children {
			draw(c, cx, d+1)
			cx += shape(c) * scale
		}
	}
	draw(root, 0, 0)
	h := float64(depth+1)*rowH + 4
	side, against := candidate, baseline
	if !candidateShape {
		side, against = baseline, candidate
	}
	head := fmt.Sprintf("%s's on-CPU profile, coloured against %s", side, against)
	if f.Step != "" {
		head = f.Step + ": " + head
	}
	return fmt.Sprintf(`<figure class="flame"><figcaption class="ct">%s (%s: %d samples over %d repetitions, %s: %d over %d; width: CPU ms per transaction; red: more in %s, blue: less)</figcaption>`+
		`<svg xmlns="http://www.w3.org/2000/svg" class="chart flamegraph" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f"><style>.fl{font:11px monospace;fill:#111;pointer-events:none}</style>%s</svg></figure>`,
		html.EscapeString(head), html.EscapeString(baseline), f.BaselineSamples, f.BaselineRepetitions, html.EscapeString(candidate), f.CandidateSamples, f.CandidateRepetitions,
		html.EscapeString(side), width, h, width, h, body.String())
}

// flameColour is white-ish for no change, red for growth and blue for
// shrinkage, saturated at the largest change of the graph.
func flameColour(delta, maxDelta float64) string {
	if maxDelta <= 0 {
		return "rgb(235,235,235)"
	}
	v := math.Min(1, math.Abs(delta)/maxDelta)
	fade := int(235 - 175*v)
	if delta > 0 {
		return fmt.Sprintf("rgb(235,%d,%d)", fade, fade)
	}
	if delta < 0 {
		return fmt.Sprintf("rgb(%d,%d,235)", fade, fade)
	}
	return "rgb(235,235,235)"
}
