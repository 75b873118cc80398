package localedit

import (
	"fmt"
	"strings"
)

// Personalization is what a request was made with; exactly one applies.
type Personalization string

// Personalizations.
const (
	None          Personalization = ""
	EditingPreset Personalization = "editing"
	WritingPreset Personalization = "writing"
	Persona       Personalization = "persona"
)

// Verdict says whether the local engine can honour a request, and how.
type Verdict struct {
	OK bool `json:"ok"`
	// Rules are the rules to run when OK.
	Rules []RuleID `json:"rules,omitempty"`
	// Reason explains a refusal (and, when OK, which phrase matched).
	Reason string `json:"reason"`
}

type instruction struct {
	can    bool
	phrase string
	rules  []RuleID
}

func parseInstruction(f []string) (instruction, error) {
	if len(f) < 2 || len(f) > 3 || f[1] == "" {
		return instruction{}, fmt.Errorf("want kind<TAB>phrase[<TAB>rules], got %d columns", len(f))
	}
	in := instruction{phrase: strings.ToLower(f[1])}
	switch f[0] {
	case "can":
		in.can = true
		if len(f) < 3 || f[2] == "" {
			return instruction{}, fmt.Errorf("a can phrase needs its rules")
		}
		if f[2] != "all" {
			for _, s := range strings.Split(f[2], ",") {
				if _, ok := LookupRule(RuleID(s)); !ok {
					return instruction{}, fmt.Errorf("unknown rule %q", s)
				}
				in.rules = append(in.rules, RuleID(s))
			}
		}
	case "cannot":
	default:
		return instruction{}, fmt.Errorf("unknown kind %q (can, cannot)", f[0])
	}
	return in, nil
}

// CanHonour says whether the rule-based engine can do what a request asks.
// It never pretends: a writing preset or a persona asks for text in a style,
// which rules cannot write, and a free instruction is honoured only when it
// asks for what the rules do (精简, 删掉废话, "make it concise",
// "tighten"...) and for nothing else (扩写, 翻译, "rewrite in a news
// style"...). The editing preset is honoured with all its rules unless its
// instruction asks for something else. The phrases are in
// rules/instructions.tsv.
func CanHonour(kind Personalization, instr string) Verdict {
	d, err := loadData()
	if err != nil {
		return Verdict{Reason: "the local editing rules could not be loaded: " + err.Error()}
	}
	switch kind {
	case WritingPreset:
		return Verdict{Reason: "the local engine edits by rules and cannot write in a writing preset's style; configure a model provider for writing presets"}
	case Persona:
		return Verdict{Reason: "the local engine edits by rules and cannot write as a persona; configure a model provider for personas"}
	case None, EditingPreset:
	default:
		return Verdict{Reason: fmt.Sprintf("unknown personalization %q", kind)}
	}
	low := strings.ToLower(instr)
	for _, in := range d.instruct {
		if !in.can && strings.Contains(low, in.phrase) {
			return Verdict{Reason: fmt.Sprintf("the instruction asks for %q, which the local editing rules cannot do; configure a model provider for it", in.phrase)}
		}
	}
	if kind == EditingPreset {
		return Verdict{OK: true, Rules: allRules(), Reason: "the editing preset's six rules"}
	}
	set := map[RuleID]bool{}
	var matched []string
	for _, in := range d.instruct {
		if in.can && strings.Contains(low, in.phrase) {
			matched = append(matched, in.phrase)
			rules := in.rules
			if rules == nil {
				rules = allRules()
			}
			for _, r := range rules {
				set[r] = true
			}
		}
	}
	if len(set) == 0 {
		if strings.TrimSpace(instr) == "" {
			return Verdict{Reason: "no instruction and no editing preset: the local engine only applies the editing rules when asked to (e.g. 精简, 删掉废话, \"make it concise\")"}
		}
		return Verdict{Reason: "the local engine only cuts filler, strengthens verbs, states the actor and removes jargon and clichés; it does not recognise this instruction as one of those"}
	}
	var out []RuleID
	for _, r := range Rules {
		if set[r.ID] {
			out = append(out, r.ID)
		}
	}
	return Verdict{OK: true, Rules: out, Reason: "matched " + strings.Join(matched, ", ")}
}

func allRules() []RuleID {
	out := make([]RuleID, len(Rules))
	for i, r := range Rules {
		out[i] = r.ID
	}
	return out
}
