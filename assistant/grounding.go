package assistant

import (
	"fmt"
	"sort"
	"strings"

	"github.com/foliodev/folio/persona/memory"
)

// GroundingMemory is one retrieved memory item as grounding sees it.
type GroundingMemory struct {
	Key       string `json:"key" msgpack:"key"`
	Statement string `json:"statement" msgpack:"stmt"`
}

// GroundingClaim is a first-person claim of a model's output and what of
// it no input or memory supports.
type GroundingClaim struct {
	Text string `json:"text" msgpack:"text"`
	// Kind is the claim's fact type (identity, work, education, birth,
	// residence, event, quantity).
	Kind string `json:"kind" msgpack:"kind"`
	// Unsupported names each anchor nothing supports: "time 2020",
	// "place 上海", "organisation 星火公司", "number 3 年", "role 医生", or
	// "time 2019 with 星火公司" when the time and the place or
	// organisation are each supported but never together.
	Unsupported []string `json:"unsupported,omitempty" msgpack:"unsupported,omitempty"`
}

// Grounding is the verdict on one output of a persona run.
type Grounding struct {
	Pass bool `json:"pass"`
	// Checked is how many first-person claims the output makes.
	Checked int `json:"checked"`
	// Claims are the unsupported claims (empty when Pass).
	Claims []GroundingClaim `json:"claims,omitempty"`
	// UsedMemory are the keys of the memory items that support a claim
	// the input alone does not, sorted.
	UsedMemory []string `json:"usedMemory,omitempty"`
}

// RetryNote is what a retry tells the model: the unsupported claims by
// name.
func (g Grounding) RetryNote() string {
	if g.Pass {
		return ""
	}
	var b strings.Builder
	b.WriteString("Your previous answer states first-person facts that neither the article, the instruction nor the author's memory supports:\n")
	for _, c := range g.Claims {
		fmt.Fprintf(&b, "- %q (%s)\n", c.Text, strings.Join(c.Unsupported, "; "))
	}
	b.WriteString("Remove them or state only facts the input or the memory gives, exactly as given.")
	return b.String()
}

// Ground checks a persona run's output: every first-person identity,
// experience, time, place, number and outcome claim (a first-person
// sentence with an anchor; negated, hedged and planned ones included —
// "I never lived in Paris" is a claim too) must be supported by the input
// (what the model was given: the instruction, the target text and its
// context) or by the retrieved memory. An anchor is supported when some
// source mentions it in the extractor's normal form (package
// persona/memory: 2019年 and "in 2019" are one time, 三年 and "3 years"
// one number; names by containment). A claim that puts a time together
// with a place or an organisation must find one source that has the time
// and at least one of them: combining the year of one memory with the
// place of another is an invention. Memory items that supply an anchor
// the input does not are the used memory.
func Ground(output string, input []string, mem []GroundingMemory) Grounding {
	in := memory.AnchorsOf(strings.Join(input, "\n"))
	ms := make([]memory.Anchors, len(mem))
	for i, m := range mem {
		ms[i] = memory.AnchorsOf(m.Statement)
	}
	used := map[string]bool{}
	g := Grounding{Pass: true}
	for _, c := range memory.Claims(output) {
		g.Checked++
		var missing []string
		// supportedBy returns which sources support an anchor: -1 is the
		// input, i >= 0 memory item i.
		supportedBy := func(ok func(a memory.Anchors) bool) []int {
			var out []int
			if ok(in) {
				out = append(out, -1)
			}
			for i, a := range ms {
				if ok(a) {
					out = append(out, i)
				}
			}
			return out
		}
		note := func(srcs []int, what string) {
			if len(srcs) == 0 {
				missing = append(missing, what)
				return
			}
			if srcs[0] != -1 { // the input does not support it
				for _, i := range srcs {
					used[mem[i].Key] = true
				}
			}
		}
		var timeSrc []int
		if c.Time != nil {
			t := *c.Time
			timeSrc = supportedBy(func(a memory.Anchors) bool { return a.SupportsTime(t) })
			note(timeSrc, "time "+t.Value)
		}
		var nameSrc []int
		for _, p := range c.Places {
			s := supportedBy(func(a memory.Anchors) bool { return a.SupportsName(p, a.Places) })
			note(s, "place "+p)
			nameSrc = append(nameSrc, s...)
		}
		for _, o := range c.Orgs {
			s := supportedBy(func(a memory.Anchors) bool { return a.SupportsName(o, a.Orgs) })
			note(s, "organisation "+o)
			nameSrc = append(nameSrc, s...)
		}
		for _, n := range c.Numbers {
			note(supportedBy(func(a memory.Anchors) bool { return a.SupportsNumber(n) }), strings.TrimSpace("number "+n.Value+" "+n.Unit))
		}
		if c.Role != "" {
			note(supportedBy(func(a memory.Anchors) bool { return a.SupportsName(c.Role, a.Roles) }), "role "+c.Role)
		}
		// The time must be bound to a place or organisation in one source.
		if c.Time != nil && len(timeSrc) > 0 && len(c.Places)+len(c.Orgs) > 0 && len(nameSrc) > 0 && !intersect(timeSrc, nameSrc) {
			names := append(append([]string(nil), c.Places...), c.Orgs...)
			missing = append(missing, "time "+c.Time.Value+" with "+strings.Join(names, ", "))
		}
		if len(missing) > 0 {
			g.Pass = false
			g.Claims = append(g.Claims, GroundingClaim{Text: c.Statement, Kind: c.Type, Unsupported: missing})
		}
	}
	for k := range used {
		g.UsedMemory = append(g.UsedMemory, k)
	}
	sort.Strings(g.UsedMemory)
	return g
}

func intersect(a, b []int) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}
