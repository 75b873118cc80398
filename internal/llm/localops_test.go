package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/llm"
)

// opsReply is the answer to a Task with a Scope.
type opsReply struct {
	Summary string       `json:"summary"`
	Ops     []flowdoc.Op `json:"ops"`
}

func askOps(t *testing.T, task llm.EditTask) opsReply {
	t.Helper()
	res := collect(t, llm.Request{Messages: msgs("the prompt for remote models"), Task: &task})
	var r opsReply
	dec := json.NewDecoder(strings.NewReader(res.Text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("the answer is not {summary, ops}: %v: %s", err, res.Text)
	}
	if r.Ops == nil {
		t.Fatalf("an answer always has ops (empty for no change): %s", res.Text)
	}
	return r
}

func text(s string) flowdoc.Run { return flowdoc.Run{Text: s} }

func bold(s string) flowdoc.Run { return flowdoc.Run{Text: s, Marks: []flowdoc.Mark{flowdoc.Bold}} }

func textBlock(id string, typ flowdoc.BlockType, runs ...flowdoc.Run) flowdoc.Block {
	b := flowdoc.Block{ID: id, Type: typ, RichText: runs}
	if typ == flowdoc.Heading {
		b.Attrs = &flowdoc.Attrs{Level: 2}
	}
	return b
}

// richBlock is an English paragraph whose edits must keep a bold run, a
// link, an inline equation and a code run exactly.
func richBlock() flowdoc.Block {
	return textBlock("p2", flowdoc.Paragraph,
		text("In order to win, "), bold("the team"), text(" made a decision about "),
		flowdoc.Run{Text: "the plan", Link: "https://example.com/plan"}, text(" using "),
		flowdoc.Run{Equation: "x^2"}, text(" and "),
		flowdoc.Run{Text: "fmt.Println", Marks: []flowdoc.Mark{flowdoc.CodeMark}}, text(". We basically ship it."))
}

func article() flowdoc.Document {
	return flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
		textBlock("h1", flowdoc.Heading, text("其实这是一个标题")),
		textBlock("p1", flowdoc.Paragraph, text("其实我们需要进行一个全面的优化。")),
		{ID: "c1", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Language: "go", Text: "// 其实 in order to\nfmt.Println(1)"}},
		richBlock(),
		{ID: "t1", Type: flowdoc.Table, Rows: []flowdoc.TableRow{{Cells: [][]flowdoc.Run{{text("其实")}, {text("in order to")}}}}},
		{ID: "m1", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Kind: "image", Src: "https://example.com/a.png", Alt: "In order to win"}},
		textBlock("q1", flowdoc.Quote, text("今天天气很好。")),
	}}
}

// apply applies an answer's ops to d as the assistant would.
func apply(t *testing.T, d flowdoc.Document, r opsReply) flowdoc.Document {
	t.Helper()
	out, err := flowdoc.Apply(d, r.Ops, flowdoc.DefaultLimits)
	if err != nil {
		t.Fatalf("the ops do not apply: %v (%+v)", err, r.Ops)
	}
	return out
}

func block(d flowdoc.Document, id string) flowdoc.Block {
	for _, b := range d.Blocks {
		if b.ID == id {
			return b
		}
	}
	return flowdoc.Block{}
}

func runsJSON(rs []flowdoc.Run) string {
	b, _ := json.Marshal(rs)
	return string(b)
}

// The four scopes answer the operation the writing assistant asks for, with
// the engine's edits in it, and every other block exactly as it was.
func TestLocalOpsScopes(t *testing.T) {
	doc := article()
	want := map[string]string{
		"h1": runsJSON([]flowdoc.Run{text("这是一个标题")}),
		"p1": runsJSON([]flowdoc.Run{text("我们需要全面优化。")}),
		"p2": runsJSON([]flowdoc.Run{text("To win, "), bold("the team"), text(" decided on "),
			{Text: "the plan", Link: "https://example.com/plan"}, text(" using "), {Equation: "x^2"}, text(" and "),
			{Text: "fmt.Println", Marks: []flowdoc.Mark{flowdoc.CodeMark}}, text(". We ship it.")}),
	}
	editing := func(sc llm.EditScope) llm.EditTask {
		return llm.EditTask{Scope: &sc, Personalization: "editing", Instruction: "按所选编辑预设编辑当前范围，并保留事实、观点和作者声音"}
	}
	check := func(t *testing.T, got flowdoc.Document, edited ...string) {
		t.Helper()
		if len(got.Blocks) != len(doc.Blocks) {
			t.Fatalf("%d blocks, want %d", len(got.Blocks), len(doc.Blocks))
		}
		for i, b := range doc.Blocks {
			g := got.Blocks[i]
			if g.ID != b.ID || g.Type != b.Type {
				t.Fatalf("block %d is %s %s, want %s %s", i, g.ID, g.Type, b.ID, b.Type)
			}
			w := runsJSON(b.RichText)
			for _, id := range edited {
				if id == b.ID {
					w = want[id]
				}
			}
			if !b.Type.IsText() {
				if !bytes.Equal(flowdoc.EncodeContent(g), flowdoc.EncodeContent(b)) {
					t.Errorf("complex block %s changed", b.ID)
				}
				continue
			}
			if got := runsJSON(g.RichText); got != w {
				t.Errorf("block %s:\n got %s\nwant %s", b.ID, got, w)
			}
		}
		if ps := flowdoc.GuardComplex(doc, got); len(ps) > 0 {
			t.Fatalf("complex-block guard: %v", ps)
		}
	}

	t.Run("selection", func(t *testing.T) {
		r := askOps(t, editing(llm.EditScope{Kind: llm.EditSelection, Blocks: []flowdoc.Block{doc.Blocks[1]}, Start: 6, End: 16}))
		if len(r.Ops) != 1 || r.Ops[0].Op != flowdoc.ReplaceSelection || r.Ops[0].BlockID != "p1" || r.Ops[0].Start != 6 || r.Ops[0].End != 16 ||
			runsJSON(r.Ops[0].RichText) != runsJSON([]flowdoc.Run{text("全面优化。")}) {
			t.Fatalf("%+v", r)
		}
		// The 其实 before the selection stays: the selection alone changes.
		if got := flowdoc.PlainText(block(apply(t, doc, r), "p1").RichText); got != "其实我们需要全面优化。" {
			t.Fatalf("%q", got)
		}
		if !strings.Contains(r.Summary, "“进行一个全面的优化”→“全面优化”") {
			t.Fatalf("summary %q", r.Summary)
		}
	})
	t.Run("block", func(t *testing.T) {
		r := askOps(t, editing(llm.EditScope{Kind: llm.EditBlock, Blocks: []flowdoc.Block{richBlock()}}))
		if len(r.Ops) != 1 || r.Ops[0].Op != flowdoc.ReplaceBlock || r.Ops[0].BlockID != "p2" || r.Ops[0].Block.ID != "p2" {
			t.Fatalf("%+v", r)
		}
		check(t, apply(t, doc, r), "p2")
		if !strings.HasPrefix(r.Summary, "3 edits by the editing rules (filler 2, strong-verbs 1)") {
			t.Fatalf("summary %q", r.Summary)
		}
	})
	t.Run("section", func(t *testing.T) {
		r := askOps(t, editing(llm.EditScope{Kind: llm.EditSection, Blocks: doc.Blocks[1:5]}))
		if len(r.Ops) != 1 || r.Ops[0].Op != flowdoc.ReplaceSection || len(r.Ops[0].Blocks) != 4 {
			t.Fatalf("%+v", r)
		}
		check(t, apply(t, doc, r), "p1", "p2")
	})
	t.Run("document", func(t *testing.T) {
		r := askOps(t, editing(llm.EditScope{Kind: llm.EditDocument, Blocks: doc.Blocks}))
		if len(r.Ops) != 1 || r.Ops[0].Op != flowdoc.ReplaceDocument {
			t.Fatalf("%+v", r)
		}
		got := apply(t, doc, r)
		check(t, got, "h1", "p1", "p2")
		if block(got, "h1").Attrs.Level != 2 {
			t.Fatal("the heading lost its level")
		}
		// Editing the result again proposes nothing.
		again := askOps(t, editing(llm.EditScope{Kind: llm.EditDocument, Blocks: got.Blocks}))
		if len(again.Ops) != 0 || !strings.Contains(again.Summary, "finds anything to change") {
			t.Fatalf("again: %+v", again)
		}
	})
}

// Formatting decides what an edit may join: an edit inside a bold run
// stays bold, a cut across runs keeps both, and a rewrite that would merge
// bold and plain words is not made.
func TestLocalOpsKeepFormatting(t *testing.T) {
	tests := []struct {
		name string
		in   []flowdoc.Run
		want []flowdoc.Run // nil: no change
	}{
		{"inside a bold run", []flowdoc.Run{text("So: "), bold("the team made a decision"), text(".")},
			[]flowdoc.Run{text("So: "), bold("the team decided"), text(".")}},
		{"a cut across runs", []flowdoc.Run{text("It is very "), bold("unique"), text(".")},
			[]flowdoc.Run{text("It is "), bold("unique"), text(".")}},
		{"a rewrite across runs", []flowdoc.Run{text("The team made a "), bold("decision"), text(".")}, nil},
		{"a moved agent in bold", []flowdoc.Run{text("The report was written by "), bold("the team"), text(".")}, nil},
		{"inside a link", []flowdoc.Run{text("See "), {Text: "in order to win", Link: "https://example.com"}, text(".")}, nil},
		{"an equation moved by a rule", []flowdoc.Run{text("这个公式"), {Equation: "f(x)"}, text("被委员会否决了。")}, nil},
		{"next to an equation", []flowdoc.Run{text("In order to "), {Equation: "f(x)"}, text(" win.")},
			[]flowdoc.Run{text("To "), {Equation: "f(x)"}, text(" win.")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := textBlock("p1", flowdoc.Paragraph, tt.in...)
			r := askOps(t, llm.EditTask{Scope: &llm.EditScope{Kind: llm.EditBlock, Blocks: []flowdoc.Block{b}}, Instruction: "make it concise and use active voice"})
			if tt.want == nil {
				if len(r.Ops) != 0 || !strings.Contains(r.Summary, "protected text") {
					t.Fatalf("want no change with a reason: %+v", r)
				}
				// The same text in one plain run is edited: the formatting
				// alone stopped the rule.
				plain := textBlock("p1", flowdoc.Paragraph, text(flowdoc.PlainText(tt.in)))
				r = askOps(t, llm.EditTask{Scope: &llm.EditScope{Kind: llm.EditBlock, Blocks: []flowdoc.Block{plain}}, Instruction: "make it concise and use active voice"})
				if len(r.Ops) != 1 {
					t.Fatalf("the plain text is not edited either: %+v", r)
				}
				return
			}
			if len(r.Ops) != 1 || runsJSON(r.Ops[0].Block.RichText) != runsJSON(tt.want) {
				t.Fatalf("got %+v, want %s", r, runsJSON(tt.want))
			}
		})
	}
}

// What the engine cannot honour, or cannot edit, is an honest empty answer
// with the reason as its summary.
func TestLocalOpsNoChange(t *testing.T) {
	doc := article()
	p1 := []flowdoc.Block{doc.Blocks[1]}
	tests := []struct {
		name   string
		task   llm.EditTask
		reason string
	}{
		{"writing preset", llm.EditTask{Personalization: "writing", Instruction: "精简"}, "writing preset"},
		{"persona", llm.EditTask{Personalization: "persona", Instruction: "精简"}, "persona"},
		{"instruction it cannot do", llm.EditTask{Instruction: "扩写这一段"}, "扩写"},
		{"instruction it does not know", llm.EditTask{Instruction: "make it sparkle"}, "does not recognise"},
		{"preset with a rule it lacks", llm.EditTask{Personalization: "editing", Instruction: "按编辑预设编辑",
			Preset: &llm.EditPreset{ID: "house", Name: "house style", Rules: []string{"filler", "oxford-comma", ""}}}, "oxford-comma, (a rule without an id)"},
		{"preset without rules", llm.EditTask{Personalization: "editing", Instruction: "按编辑预设编辑",
			Preset: &llm.EditPreset{ID: "house", Name: "house style"}}, "«house style» has no rules"},
		{"complex block", llm.EditTask{Instruction: "精简", Scope: &llm.EditScope{Kind: llm.EditBlock, Blocks: doc.Blocks[2:3]}}, "block c1 is a code block"},
		{"section without text", llm.EditTask{Instruction: "精简", Scope: &llm.EditScope{Kind: llm.EditSection, Blocks: doc.Blocks[4:6]}}, "holds no paragraph"},
		{"nothing found", llm.EditTask{Instruction: "精简", Scope: &llm.EditScope{Kind: llm.EditBlock, Blocks: doc.Blocks[6:7]}}, "finds anything to change"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := tt.task
			if task.Scope == nil {
				task.Scope = &llm.EditScope{Kind: llm.EditBlock, Blocks: p1}
			}
			r := askOps(t, task)
			if len(r.Ops) != 0 || !strings.Contains(r.Summary, tt.reason) || strings.HasPrefix(r.Summary, "no change proposed") {
				t.Fatalf("%+v, want no ops and a reason with %q", r, tt.reason)
			}
		})
	}
	// A preset whose rules the engine has runs exactly those.
	r := askOps(t, llm.EditTask{Personalization: "editing", Instruction: "按编辑预设编辑",
		Preset: &llm.EditPreset{ID: "verbs", Name: "verbs only", Rules: []string{"strong-verbs", "keep"}},
		Scope:  &llm.EditScope{Kind: llm.EditBlock, Blocks: []flowdoc.Block{textBlock("p1", flowdoc.Paragraph, text("In order to win, the team made a decision."))}}})
	if len(r.Ops) != 1 || flowdoc.PlainText(r.Ops[0].Block.RichText) != "In order to win, the team decided." {
		t.Fatalf("strong verbs only: %+v", r)
	}
}

func TestLocalOpsRefusesBadScopes(t *testing.T) {
	p := llm.NewLocal("")
	p1 := textBlock("p1", flowdoc.Paragraph, text("其实很好。"))
	for name, task := range map[string]llm.EditTask{
		"no blocks":          {Scope: &llm.EditScope{Kind: llm.EditDocument}},
		"unknown kind":       {Scope: &llm.EditScope{Kind: "chapter", Blocks: []flowdoc.Block{p1}}},
		"selection too long": {Scope: &llm.EditScope{Kind: llm.EditSelection, Blocks: []flowdoc.Block{p1}, Start: 2, End: 6}},
		"empty selection":    {Scope: &llm.EditScope{Kind: llm.EditSelection, Blocks: []flowdoc.Block{p1}, Start: 2, End: 2}},
		"two blocks":         {Scope: &llm.EditScope{Kind: llm.EditBlock, Blocks: []flowdoc.Block{p1, p1}}},
		"segments and scope": {Segments: []string{"x"}, Scope: &llm.EditScope{Kind: llm.EditBlock, Blocks: []flowdoc.Block{p1}}},
	} {
		task.Instruction = "精简"
		_, err := p.Stream(context.Background(), llm.Request{Task: &task})
		if llm.CodeOf(err) != llm.CodeBadRequest {
			t.Errorf("%s: %v, want bad_request", name, err)
		}
	}
}

// The request and answer examples of docs/ai.md are what the local
// provider does.
func TestLocalDocExamples(t *testing.T) {
	data, err := os.ReadFile("../../docs/ai.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string]string{}
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)\n```").FindAllStringSubmatch(string(data), -1) {
		if key, _, ok := strings.Cut(strings.TrimPrefix(m[1], `{"`), `"`); ok {
			examples[key] = m[1]
		}
	}
	for req, answer := range map[string]string{"segments": "outcome", "scope": "summary"} {
		if examples[req] == "" || examples[answer] == "" {
			t.Fatalf("docs/ai.md has no %s example or no %s answer", req, answer)
		}
		var task llm.EditTask
		if err := json.Unmarshal([]byte(examples[req]), &task); err != nil {
			t.Fatalf("%s example: %v", req, err)
		}
		res := collect(t, llm.Request{Task: &task})
		var got, want any
		json.Unmarshal([]byte(res.Text), &got)
		if err := json.Unmarshal([]byte(examples[answer]), &want); err != nil {
			t.Fatalf("%s example: %v", answer, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("docs/ai.md's answer to the %s example:\n%s\nthe local provider's:\n%s", req, examples[answer], res.Text)
		}
	}
}

// FuzzLocalOps edits arbitrary rich text (s cut into runs at '|', each run
// plain, bold, a link, code or an equation by styles): the answer applies
// to the block, and the links, code and equations come back exactly, in
// order.
func FuzzLocalOps(f *testing.F) {
	f.Add("In order to win, |the team| made a decision about |the plan| using |x| and |fmt|. We basically ship it.", []byte{0, 1, 0, 2, 0, 4, 0, 3, 0})
	f.Add("其实|我们需要|进行一个全面的优化|，这个方案被委员会否决了。", []byte{0, 1, 0, 2})
	f.Add("The report was written by |the team|.", []byte{0, 1, 0})
	f.Fuzz(func(t *testing.T, s string, styles []byte) {
		if len(s) > 2048 {
			return
		}
		var runs []flowdoc.Run
		for i, part := range strings.Split(s, "|") {
			r := flowdoc.Run{Text: part}
			st := byte(0)
			if i < len(styles) {
				st = styles[i] % 5
			}
			switch st {
			case 1:
				r.Marks = []flowdoc.Mark{flowdoc.Bold}
			case 2:
				r.Link = "https://example.com/" + string(rune('a'+i%26))
			case 3:
				r.Marks = []flowdoc.Mark{flowdoc.CodeMark}
			case 4:
				r = flowdoc.Run{Equation: "x_" + string(rune('a'+i%26))}
			}
			runs = append(runs, r)
		}
		doc := flowdoc.Sanitize(flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{textBlock("p1", flowdoc.Paragraph, runs...)}})
		if ps := flowdoc.Validate(doc, flowdoc.DefaultLimits); len(ps) > 0 {
			return
		}
		task := llm.EditTask{Instruction: "make it concise and use active voice", Scope: &llm.EditScope{Kind: llm.EditBlock, Blocks: doc.Blocks}}
		answer, _, err := llm.LocalAnswer(llm.Request{Task: &task})
		if err != nil {
			t.Fatalf("LocalAnswer: %v", err)
		}
		var r opsReply
		if err := json.Unmarshal([]byte(answer), &r); err != nil {
			t.Fatalf("answer %s: %v", answer, err)
		}
		if len(r.Ops) == 0 {
			return
		}
		got, err := flowdoc.Apply(doc, r.Ops, flowdoc.DefaultLimits)
		if err != nil {
			t.Fatalf("the answer does not apply: %v: %s", err, answer)
		}
		keptOf := func(rs []flowdoc.Run) string {
			var out []flowdoc.Run
			for _, r := range rs {
				if r.Equation != "" || r.Link != "" || strings.Contains(runsJSON([]flowdoc.Run{r}), `"code"`) {
					out = append(out, r)
				}
			}
			return runsJSON(out)
		}
		if a, b := keptOf(doc.Blocks[0].RichText), keptOf(got.Blocks[0].RichText); a != b {
			t.Fatalf("kept runs changed:\n%s\n%s", a, b)
		}
	})
}

// A first-person fact is edited around its facts, and the summary names the
// facts it kept, in the language of the text.
func TestLocalOpsFirstPersonFacts(t *testing.T) {
	for _, tt := range []struct{ in, out, kept string }{
		{"We made a decision to conduct an analysis of the data in 2023.", "We decided to analyze the data in 2023.",
			`Kept the first-person facts "2023".`},
		{"We almost never made a decision in order to please the board in 2021.", "We almost never decided to please the board in 2021.",
			`Kept the first-person facts "almost", "never", "2021".`},
		{"我们2023年其实对流程进行了调整。", "我们2023年调整了流程。", "保留了第一人称事实：“2023年”。"},
	} {
		r := askOps(t, llm.EditTask{Instruction: "精简", Scope: &llm.EditScope{Kind: llm.EditBlock,
			Blocks: []flowdoc.Block{textBlock("p1", flowdoc.Paragraph, text(tt.in))}}})
		if len(r.Ops) != 1 || flowdoc.PlainText(r.Ops[0].Block.RichText) != tt.out {
			t.Fatalf("%q: %+v, want %q", tt.in, r, tt.out)
		}
		if !strings.HasSuffix(r.Summary, tt.kept) {
			t.Errorf("%q: summary %q, want it to end %q", tt.in, r.Summary, tt.kept)
		}
	}
	// A sentence that is not in the first person names no facts.
	r := askOps(t, llm.EditTask{Instruction: "精简", Scope: &llm.EditScope{Kind: llm.EditBlock,
		Blocks: []flowdoc.Block{textBlock("p1", flowdoc.Paragraph, text("The team made a decision in 2023."))}}})
	if len(r.Ops) != 1 || strings.Contains(r.Summary, "first-person") {
		t.Fatalf("%+v", r)
	}
}
