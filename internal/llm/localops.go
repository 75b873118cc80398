package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/llm/localedit"
)

// errScope is a Scope that does not fit its blocks.
var errScope = errors.New("llm: bad edit scope")

// opsAnswer is the JSON the local provider answers to a Task with a Scope.
type opsAnswer struct {
	Summary string           `json:"summary"`
	Ops     []map[string]any `json:"ops"`
}

// scopeTarget is one text block answerOps edits.
type scopeTarget struct {
	block  int // index in Scope.Blocks
	runs   []flowdoc.Run
	within *localedit.Span // a selection's range
}

// answerOps edits t.Scope and answers in the writing assistant's answer
// form, {"summary": …, "ops": […]}, so that the assistant's pipeline
// (extraction, domain repair, validation, suggestion) is the same for
// every provider:
//
//   - The text it edits is the rich text of the scope's paragraph, heading
//     and quote blocks (a selection's block whatever its type), one
//     localedit segment per block: its runs' text concatenated, each
//     inline equation as one U+FFFC. Every other block is never read and
//     comes back exactly as it was.
//   - Runs that are links, code or inline equations are kept
//     (localedit.Request.Keep): no edit touches them, so they come back
//     with their text, marks, link and LaTeX. A selection edits only its
//     range (localedit.Request.Within) but is read in its block, so a
//     sentence that is a first-person fact stays protected.
//   - Where the formatting changes between runs (marks, link) is a
//     localedit.Request.Breaks: a change's new text never mixes runs of
//     different formatting, so an edit inside a bold run stays bold and one
//     that would merge bold and plain words is not made.
//   - Each change is mapped back onto the runs: the text its before and
//     after share at the start and at the end keeps its runs, and the new
//     text between takes the marks and link of the first run it replaces
//     (for an insertion, of the editable run before it, else after it),
//     as the engine assumed. Text outside the changes keeps its runs.
//   - selection → replace_selection over the selected range; block →
//     replace_block; section → replace_section with every block of the
//     section; document → replace_document with every block, complex ones
//     identical. Nothing to change, a scope without text blocks, or a
//     request the engine cannot honour → {"summary": <the reason>,
//     "ops": []}.
func answerOps(t *EditTask) (string, error) {
	sc := t.Scope
	targets, skip, err := scopeTargets(sc)
	if err != nil {
		return "", err
	}
	rules, refusal, err := taskRules(t)
	if err != nil {
		return "", err
	}
	if refusal != "" {
		return marshalOps(refusal, nil)
	}
	if skip != "" {
		return marshalOps(skip, nil)
	}
	n := len(targets)
	req := localedit.Request{Lang: localedit.Lang(t.Lang), Rules: rules, Segments: make([]string, n),
		Keep: make([][]localedit.Span, n), Within: make([]*localedit.Span, n), Breaks: make([][]int, n)}
	for i, tg := range targets {
		req.Segments[i] = flowdoc.PlainText(tg.runs)
		req.Keep[i], req.Breaks[i] = runSpans(tg.runs)
		req.Within[i] = tg.within
	}
	res, err := localedit.Edit(req)
	if err != nil {
		return "", err
	}
	if res.Outcome != localedit.Edited {
		return marshalOps(strings.TrimPrefix(res.Reason, "no change proposed: "), nil)
	}
	edited := make([][]flowdoc.Run, len(targets)) // new runs of the targets that changed
	changed := make([]bool, len(targets))
	for i, tg := range targets {
		var changes []localedit.Change
		for _, c := range res.Edits {
			if c.Segment == i {
				changes = append(changes, c)
			}
		}
		if len(changes) == 0 {
			continue
		}
		cells, err := applyChanges(tg.runs, changes)
		if err != nil {
			return "", err
		}
		if tg.within != nil {
			// The selection's new text: the cells from its start to its end
			// moved by what the changes added or removed.
			end := tg.within.To
			for _, c := range changes {
				end += utf8.RuneCountInString(c.After) - (c.To - c.From)
			}
			cells = cells[tg.within.From:end]
		}
		edited[i], changed[i] = runsOfCells(cells, tg.runs), true
	}
	var op map[string]any
	blocks := func() []flowdoc.Block {
		out := slices.Clone(sc.Blocks)
		for i, tg := range targets {
			if changed[i] {
				out[tg.block] = withRuns(out[tg.block], edited[i])
			}
		}
		return out
	}
	switch sc.Kind {
	case EditSelection:
		op = map[string]any{"op": "replace_selection", "blockId": sc.Blocks[0].ID, "start": sc.Start, "end": sc.End, "richText": nonNil(edited[0])}
	case EditBlock:
		op = map[string]any{"op": "replace_block", "blockId": sc.Blocks[0].ID, "block": blocks()[0]}
	case EditSection:
		op = map[string]any{"op": "replace_section", "blocks": blocks()}
	case EditDocument:
		op = map[string]any{"op": "replace_document", "document": flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: blocks()}}
	}
	return marshalOps(summarize(res.Edits, res.Facts, req.Segments), []map[string]any{op})
}

func marshalOps(summary string, ops []map[string]any) (string, error) {
	if ops == nil {
		ops = []map[string]any{}
	}
	b, err := json.Marshal(opsAnswer{Summary: summary, Ops: ops})
	return string(b), err
}

func nonNil(rs []flowdoc.Run) []flowdoc.Run {
	if rs == nil {
		return []flowdoc.Run{}
	}
	return rs
}

// withRuns is b with rich text rs.
func withRuns(b flowdoc.Block, rs []flowdoc.Run) flowdoc.Block {
	b = b.Clone()
	b.RichText = rs
	return b
}

// scopeTargets checks sc and returns the text blocks it edits, or (skip)
// why there is nothing the engine edits in it.
func scopeTargets(sc *EditScope) (targets []scopeTarget, skip string, err error) {
	bad := func(format string, args ...any) ([]scopeTarget, string, error) {
		return nil, "", fmt.Errorf("%w: "+format, append([]any{errScope}, args...)...)
	}
	if len(sc.Blocks) == 0 {
		return bad("%s scope without blocks", sc.Kind)
	}
	switch sc.Kind {
	case EditSelection:
		if len(sc.Blocks) != 1 {
			return bad("a selection is in one block, the scope has %d", len(sc.Blocks))
		}
		n := utf8.RuneCountInString(flowdoc.PlainText(sc.Blocks[0].RichText))
		if sc.Start < 0 || sc.End <= sc.Start || sc.End > n {
			return bad("selection %d..%d is not a non-empty range of block %q's %d code points", sc.Start, sc.End, sc.Blocks[0].ID, n)
		}
		return []scopeTarget{{block: 0, runs: sc.Blocks[0].RichText, within: &localedit.Span{From: sc.Start, To: sc.End}}}, "", nil
	case EditBlock:
		if len(sc.Blocks) != 1 {
			return bad("a block scope holds one block, this one %d", len(sc.Blocks))
		}
		if b := sc.Blocks[0]; !b.Type.IsText() {
			return nil, fmt.Sprintf("the local engine edits the text of paragraphs, headings and quotes; block %s is %s block, which it leaves as it is", b.ID, article(b.Type)), nil
		}
		return []scopeTarget{{block: 0, runs: sc.Blocks[0].RichText}}, "", nil
	case EditSection, EditDocument:
		for i, b := range sc.Blocks {
			if b.Type.IsText() {
				targets = append(targets, scopeTarget{block: i, runs: b.RichText})
			}
		}
		if len(targets) == 0 {
			return nil, fmt.Sprintf("the %s holds no paragraph, heading or quote: the local engine edits only their text and leaves every other block as it is", sc.Kind), nil
		}
		return targets, "", nil
	}
	return bad("unknown scope kind %q (selection, block, section or document)", sc.Kind)
}

func article(t flowdoc.BlockType) string {
	if t != "" && strings.ContainsRune("aeiou", rune(t[0])) {
		return "an " + string(t)
	}
	return "a " + string(t)
}

// kept reports whether no edit may touch run r: a link, code or an inline
// equation.
func kept(r flowdoc.Run) bool {
	return r.Equation != "" || r.Link != "" || slices.Contains(r.Marks, flowdoc.CodeMark)
}

// runSpans returns, in code points of the runs' plain text, the spans of
// the runs that are kept and the breaks where the formatting changes
// (marks or link; an equation is a formatting of its own).
func runSpans(runs []flowdoc.Run) (keep []localedit.Span, breaks []int) {
	at := 0
	var prev *flowdoc.Run
	for i := range runs {
		r := &runs[i]
		n := 1
		if r.Equation == "" {
			n = utf8.RuneCountInString(r.Text)
		}
		if n == 0 {
			continue
		}
		if kept(*r) {
			if k := len(keep) - 1; k >= 0 && keep[k].To == at {
				keep[k].To = at + n
			} else {
				keep = append(keep, localedit.Span{From: at, To: at + n})
			}
		}
		if prev != nil && (r.Equation != "" || prev.Equation != "" || r.Link != prev.Link || r.Title != prev.Title || !slices.Equal(r.Marks, prev.Marks)) {
			breaks = append(breaks, at)
		}
		prev = r
		at += n
	}
	return keep, breaks
}

// cell is one code point of rich text and the run whose marks and link it
// has (-1: none).
type cell struct {
	r   rune
	run int
}

func cellsOf(runs []flowdoc.Run) []cell {
	var out []cell
	for i, r := range runs {
		if r.Equation != "" {
			out = append(out, cell{flowdoc.ObjectReplacement, i})
			continue
		}
		for _, c := range r.Text {
			out = append(out, cell{c, i})
		}
	}
	return out
}

// applyChanges applies one segment's changes (sorted, disjoint, in code
// points of the runs' plain text) to the runs' cells. It returns an error
// when a change does not describe the text (a defect, never input).
func applyChanges(runs []flowdoc.Run, changes []localedit.Change) ([]cell, error) {
	cells := cellsOf(runs)
	editable := func(i int) bool { return i >= 0 && i < len(cells) && !kept(runs[cells[i].run]) }
	out := make([]cell, 0, len(cells))
	at := 0
	for _, ch := range changes {
		if ch.From < at || ch.To < ch.From || ch.To > len(cells) || string(runesOf(cells[ch.From:ch.To])) != ch.Before {
			return nil, fmt.Errorf("llm: local edit %d..%d %q does not match the text", ch.From, ch.To, ch.Before)
		}
		before, after := []rune(ch.Before), []rune(ch.After)
		p := 0
		for p < len(before) && p < len(after) && before[p] == after[p] {
			p++
		}
		q := 0
		for q < len(before)-p && q < len(after)-p && before[len(before)-1-q] == after[len(after)-1-q] {
			q++
		}
		from, to := ch.From+p, ch.To-q
		style := -1
		switch {
		case from < to && editable(from):
			style = cells[from].run
		case from == to && editable(from-1):
			style = cells[from-1].run
		case from == to && editable(from):
			style = cells[from].run
		}
		out = append(out, cells[at:from]...)
		for _, r := range after[p : len(after)-q] {
			out = append(out, cell{r, style})
		}
		at = to
	}
	return append(out, cells[at:]...), nil
}

func runesOf(cs []cell) []rune {
	out := make([]rune, len(cs))
	for i, c := range cs {
		out[i] = c.r
	}
	return out
}

// runsOfCells turns cells back into runs: consecutive text with the same
// marks and link is one run; an equation keeps its own run.
func runsOfCells(cells []cell, runs []flowdoc.Run) []flowdoc.Run {
	var out []flowdoc.Run
	var text strings.Builder
	var style flowdoc.Run
	open := false
	flush := func() {
		if open && text.Len() > 0 {
			r := style
			r.Text = text.String()
			out = append(out, r)
		}
		text.Reset()
		open = false
	}
	for _, c := range cells {
		var s flowdoc.Run
		if c.run >= 0 {
			src := runs[c.run]
			if src.Equation != "" {
				flush()
				eq := src
				eq.Marks = slices.Clone(src.Marks)
				out = append(out, eq)
				continue
			}
			s = flowdoc.Run{Marks: slices.Clone(src.Marks), Link: src.Link, Title: src.Title}
		}
		if !open || s.Link != style.Link || s.Title != style.Title || !slices.Equal(s.Marks, style.Marks) {
			flush()
			style, open = s, true
		}
		text.WriteRune(c.r)
	}
	flush()
	return out
}

// summarize says what the edits did, in the language of the text: how many
// changes each rule made and the changes themselves, within about 400
// characters, then the first-person facts the edited sentences kept (up to
// eight, each once).
func summarize(edits []localedit.Change, facts []localedit.Fact, texts []string) string {
	han, latin := 0, 0
	for _, t := range texts {
		for _, r := range t {
			switch {
			case unicode.Is(unicode.Han, r):
				han++
			case r < 0x250 && unicode.IsLetter(r):
				latin++
			}
		}
	}
	zh := han > 0 && han*3 >= latin
	var counts []string
	for _, rule := range localedit.Rules {
		n := 0
		for _, e := range edits {
			if slices.Contains(e.Rules, rule.ID) {
				n++
			}
		}
		switch {
		case n == 0 || rule.ID == localedit.Keep:
		case zh:
			counts = append(counts, fmt.Sprintf("%s %d 处", rule.Name, n))
		default:
			counts = append(counts, fmt.Sprintf("%s %d", rule.ID, n))
		}
	}
	var b strings.Builder
	if zh {
		fmt.Fprintf(&b, "按编辑规则修改了 %d 处（%s）：", len(edits), strings.Join(counts, "，"))
	} else {
		noun := "edits"
		if len(edits) == 1 {
			noun = "edit"
		}
		fmt.Fprintf(&b, "%d %s by the editing rules (%s): ", len(edits), noun, strings.Join(counts, ", "))
	}
	for i, e := range edits {
		var item string
		before, after := clipText(strings.TrimSpace(e.Before)), clipText(strings.TrimSpace(e.After))
		switch {
		case zh && after == "":
			item = "删去“" + before + "”"
		case zh:
			item = "“" + before + "”→“" + after + "”"
		case after == "":
			item = `cut "` + before + `"`
		default:
			item = `"` + before + `" → "` + after + `"`
		}
		if i > 0 && utf8.RuneCountInString(b.String())+utf8.RuneCountInString(item) > 400 {
			if zh {
				b.WriteString("；等")
			} else {
				b.WriteString("; and more")
			}
			break
		}
		if i > 0 {
			if zh {
				b.WriteString("；")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(item)
	}
	if zh {
		b.WriteString("。")
	} else {
		b.WriteString(".")
	}
	var kept []string
	for _, f := range facts {
		q := `"` + clipText(f.Text) + `"`
		if zh {
			q = "“" + clipText(f.Text) + "”"
		}
		if !slices.Contains(kept, q) && len(kept) < 8 {
			kept = append(kept, q)
		}
	}
	switch {
	case len(kept) == 0:
	case zh:
		b.WriteString("保留了第一人称事实：" + strings.Join(kept, "、") + "。")
	default:
		b.WriteString(" Kept the first-person facts " + strings.Join(kept, ", ") + ".")
	}
	return b.String()
}

func clipText(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	return string([]rune(s)[:39]) + "…"
}
