package localedit

import (
	"bufio"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
)

// RuleID names one rule of the editing preset "六条文章强化规则". IDs are
// stable: they are stored in presets, runs and suggestions.
type RuleID string

// The six rules, in the preset's order.
const (
	Filler      RuleID = "filler"       // 1. cut filler and redundancy
	StrongVerbs RuleID = "strong-verbs" // 2. strong verbs instead of weak verb + noun
	ActiveVoice RuleID = "active-voice" // 3. a clear actor, active voice where the actor is stated
	Jargon      RuleID = "jargon"       // 4. no needless jargon
	Cliche      RuleID = "cliche"       // 5. no clichés / 套话
	Keep        RuleID = "keep"         // 6. keep the author's facts, views and voice
)

// Rule describes one rule and where its data lives.
type Rule struct {
	ID RuleID
	// Name is the rule's name in the preset (Chinese), Title in English.
	Name, Title string
	// Files are the data files under rules/ that drive it.
	Files []string
}

// Rules lists the six rules in the preset's order. Keep is not an edit: it
// is the set of protected spans every other rule respects, and it cannot be
// switched off.
var Rules = []Rule{
	{Filler, "删掉废话和冗余", "Cut filler and redundancy", []string{"filler.zh.tsv", "filler.en.tsv"}},
	{StrongVerbs, "用有力的动词", "Strong verbs instead of weak verb + noun", []string{"verbs.zh.tsv", "verbs.en.tsv", "forms.en.tsv"}},
	{ActiveVoice, "明确动作主体", "A clear actor: active voice where the actor is stated", []string{"actor.zh.tsv", "actor.en.tsv", "forms.en.tsv"}},
	{Jargon, "少用没必要的行话", "No needless jargon", []string{"jargon.zh.tsv", "jargon.en.tsv"}},
	{Cliche, "少用套话", "No clichés", []string{"cliche.zh.tsv", "cliche.en.tsv"}},
	{Keep, "保留事实、观点和作者声音", "Keep the author's facts, views and voice", []string{"keep.zh.tsv", "keep.en.tsv"}},
}

// applyOrder is the order rules run in within a pass: restructuring first,
// so that the word-level rules see its result in the same pass.
var applyOrder = []RuleID{ActiveVoice, StrongVerbs, Cliche, Jargon, Filler}

// LookupRule returns the rule with id.
func LookupRule(id RuleID) (Rule, bool) {
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// ParseRules checks a list of rule ids from outside. An empty list means all
// rules.
func ParseRules(ids []string) ([]RuleID, error) {
	out := make([]RuleID, 0, len(ids))
	for _, s := range ids {
		if _, ok := LookupRule(RuleID(s)); !ok {
			return nil, fmt.Errorf("%w: %q (known: filler, strong-verbs, active-voice, jargon, cliche, keep)", ErrUnknownRule, s)
		}
		out = append(out, RuleID(s))
	}
	return out, nil
}

//go:embed rules/*.tsv
var ruleFS embed.FS

// lang is the language a sentence is edited as.
type lang uint8

const (
	langEN lang = iota + 1
	langZH
)

// data is every rule file, compiled.
type data struct {
	rows  map[RuleID]map[lang][]*row
	index map[RuleID]map[lang]*rowIndex

	forms    map[string]verbForms // base -> forms (forms.en.tsv)
	formOf   map[string]formRef   // any irregular form -> its verb and form
	enLists  map[string]map[string]string
	zhLists  map[string]map[string]string
	zhWords  []string // literal words of the Chinese rules, added to the segmenter
	instruct []instruction
}

var loadData = sync.OnceValues(func() (*data, error) { return parseData(ruleFS) })

func parseData(fsys fs.FS) (*data, error) {
	d := &data{
		rows:    map[RuleID]map[lang][]*row{},
		forms:   map[string]verbForms{},
		formOf:  map[string]formRef{},
		enLists: map[string]map[string]string{},
		zhLists: map[string]map[string]string{},
	}
	if err := eachLine(fsys, "forms.en.tsv", func(line int, f []string) error {
		if len(f) != 5 {
			return fmt.Errorf("want 5 columns (base, third person, past, participle, -ing), got %d", len(f))
		}
		vf := verbForms{f[0], f[1], f[2], f[3], f[4]}
		d.forms[f[0]] = vf
		for i := len(vf) - 1; i >= 0; i-- {
			d.formOf[vf[i]] = formRef{base: f[0], form: verbForm(i)}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for _, l := range []struct {
		file string
		into map[string]map[string]string
	}{{"actor.en.tsv", d.enLists}, {"keep.en.tsv", d.enLists}, {"actor.zh.tsv", d.zhLists}, {"keep.zh.tsv", d.zhLists}} {
		if err := eachLine(fsys, l.file, func(line int, f []string) error {
			if len(f) < 2 || len(f) > 3 {
				return fmt.Errorf("want kind<TAB>word[<TAB>value], got %d columns", len(f))
			}
			m := l.into[f[0]]
			if m == nil {
				m = map[string]string{}
				l.into[f[0]] = m
			}
			v := ""
			if len(f) == 3 {
				v = f[2]
			}
			m[f[1]] = v
			return nil
		}); err != nil {
			return nil, err
		}
	}
	for _, spec := range []struct {
		rule RuleID
		file string
		lang lang
	}{
		{Filler, "filler.en.tsv", langEN}, {Filler, "filler.zh.tsv", langZH},
		{StrongVerbs, "verbs.en.tsv", langEN}, {StrongVerbs, "verbs.zh.tsv", langZH},
		{Jargon, "jargon.en.tsv", langEN}, {Jargon, "jargon.zh.tsv", langZH},
		{Cliche, "cliche.en.tsv", langEN}, {Cliche, "cliche.zh.tsv", langZH},
	} {
		var last *row
		if err := eachLine(fsys, spec.file, func(line int, f []string) error {
			if f[0] == "+" || f[0] == "-" {
				return last.addExample(f)
			}
			if len(f) < 1 || len(f) > 3 {
				return fmt.Errorf("want pattern<TAB>replacement[<TAB>flags], got %d columns", len(f))
			}
			repl, flags := "", ""
			if len(f) > 1 {
				repl = f[1]
			}
			if len(f) > 2 {
				flags = f[2]
			}
			r, err := compileRow(spec.lang, f[0], repl, flags)
			if err != nil {
				return err
			}
			r.rule = spec.rule
			r.src = fmt.Sprintf("%s:%d", spec.file, line)
			last = r
			if d.rows[spec.rule] == nil {
				d.rows[spec.rule] = map[lang][]*row{}
			}
			d.rows[spec.rule][spec.lang] = append(d.rows[spec.rule][spec.lang], r)
			if spec.lang == langZH {
				for _, e := range r.elems {
					for _, a := range e.alts {
						if len([]rune(a)) > 1 {
							d.zhWords = append(d.zhWords, a)
						}
					}
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if err := eachLine(fsys, "instructions.tsv", func(line int, f []string) error {
		in, err := parseInstruction(f)
		if err != nil {
			return err
		}
		d.instruct = append(d.instruct, in)
		return nil
	}); err != nil {
		return nil, err
	}
	sort.Strings(d.zhWords)
	d.index = map[RuleID]map[lang]*rowIndex{}
	for id, byLang := range d.rows {
		d.index[id] = map[lang]*rowIndex{}
		for lg, rows := range byLang {
			for _, r := range rows {
				for i := range r.elems {
					if r.elems[i].kind == elVerb {
						r.elems[i].forms = d.verbFormsOf(r.elems[i].verb)
					}
				}
			}
			d.index[id][lg] = newRowIndex(rows)
		}
	}
	return d, nil
}

// eachLine calls fn with the tab-separated fields of every line of file that
// is neither blank nor a comment ("#"). A trailing empty field (an empty
// replacement) is kept.
func eachLine(fsys fs.FS, file string, fn func(line int, fields []string) error) error {
	f, err := fsys.Open(path.Join("rules", file))
	if err != nil {
		return fmt.Errorf("localedit: rule data: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(s) == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if err := fn(n, strings.Split(s, "\t")); err != nil {
			return fmt.Errorf("localedit: rule data %s:%d: %w", file, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("localedit: rule data %s: %w", file, err)
	}
	return nil
}

// example is a sentence a row must change (Want is what it becomes) or, for
// a negative example, leave alone; the tests run every one.
type example struct {
	In, Want string
	Positive bool
}

// addExample attaches a "+<TAB>in<TAB>out" or "-<TAB>in" line to r, the
// row above it.
func (r *row) addExample(f []string) error {
	switch {
	case r == nil:
		return fmt.Errorf("an example line needs a row above it")
	case f[0] == "+" && len(f) == 3 && f[1] != "" && f[2] != "":
		r.examples = append(r.examples, example{In: f[1], Want: f[2], Positive: true})
	case f[0] == "-" && len(f) == 2 && f[1] != "":
		r.examples = append(r.examples, example{In: f[1]})
	default:
		return fmt.Errorf("want +<TAB>sentence<TAB>edited sentence or -<TAB>sentence, got %d columns", len(f))
	}
	return nil
}
