package reading

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"

	"github.com/foliodev/folio/assistant/sentence"
	"github.com/foliodev/folio/internal/llm"
)

// Local is the reading engine of the local provider: an honest,
// extractive explanation assembled from the article itself and labelled
// as such — no model, nothing invented. From the request Prompt builds it
// answers, in the article's language (Chinese labels when the passage is
// mostly CJK):
//
//  1. the label: an extractive explanation from this article, no model;
//  2. the passage in context: the sentence that holds it with the
//     sentences before and after it in the same block;
//  3. the section it stands under (the nearest heading above);
//  4. definitions found elsewhere in the article: sentences outside the
//     passage's block that contain a term of the passage followed by a
//     definition cue ("is a", "means", "refers to", "是", "指", "即",
//     "称为", "所谓", "：" …), at most three;
//  5. related sections: other headings sharing terms with the passage,
//     at most three;
//  6. with a question, the article's sentences that share the most terms
//     with the question (and then the passage), at most two.
//
// Parts with nothing to show are left out. The answer streams sentence by
// sentence; usage is counted like the local editor's.
type Local struct{ model string }

var _ llm.Provider = (*Local)(nil)

// NewLocal returns the engine reporting model (llm.LocalModel when "").
func NewLocal(model string) *Local {
	if model == "" {
		model = llm.LocalModel
	}
	return &Local{model: model}
}

// Name is "local".
func (*Local) Name() string { return "local" }

// Model is the reported model.
func (l *Local) Model() string { return l.model }

// Stream answers req.
func (l *Local) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, &llm.Error{Code: llm.CodeStreamCut, Provider: "local", Msg: "cancelled", Err: err}
	}
	var in request
	if len(req.Messages) == 0 || json.Unmarshal([]byte(req.Messages[len(req.Messages)-1].Content), &in) != nil {
		return nil, &llm.Error{Code: llm.CodeBadRequest, Provider: "local", Msg: "the reading engine reads the JSON request of reading.Prompt",
			Err: errors.New("last message is not a reading request")}
	}
	ans := explainLocal(in)
	var pieces []string
	for _, line := range strings.SplitAfter(ans, "\n") {
		if line != "" {
			pieces = append(pieces, line)
		}
	}
	return llm.NewPieceStream(ctx, "local", pieces, "stop",
		llm.Usage{Input: llm.CountInput(req.Messages), Output: llm.CountTokens(ans)}), nil
}

// labels of the answer, by language.
type labels struct {
	head, context, section, defs, related, question, none string
	open, close                                           string
}

var (
	enLabels = labels{head: "Extractive explanation from this article (no model was used).",
		context: "In context:", section: "Section:", defs: "Defined elsewhere in the article:",
		related: "Related sections:", question: "On your question, the article says:",
		none: "The article says nothing more about this passage.", open: "“", close: "”"}
	zhLabels = labels{head: "抽取式解释：以下内容摘自本文（未使用模型）。",
		context: "上下文：", section: "所在章节：", defs: "文中其他地方的说明：",
		related: "相关章节：", question: "关于你的问题，文中写道：",
		none: "文中没有关于这段文字的更多内容。", open: "「", close: "」"}
)

var defCues = []string{" is a ", " is an ", " is the ", " are ", " means ", " refers to ", " stands for ", " is defined as ", " is called ",
	"是", "指", "即", "称为", "叫做", "意思是", "定义为", "：", ":"}

func explainLocal(in request) string {
	var ps []passage
	for i, b := range in.Article {
		ps = append(ps, passage{textBlock: b, index: i, sentences: sentence.Split(b.Text)})
	}
	lb := enLabels
	if cjkShare(in.Passage) {
		lb = zhLabels
	}
	var out []string
	out = append(out, lb.head)
	// Where is the passage?
	at := -1
	for i, p := range ps {
		if in.Block != "" && p.Block != in.Block {
			continue
		}
		if strings.Contains(p.Text, in.Passage) {
			at = i
			break
		}
	}
	if at < 0 && in.Block != "" {
		for i, p := range ps {
			if p.Block == in.Block {
				at = i
				break
			}
		}
	}
	quote := func(s string) string { return lb.open + s + lb.close }
	if at >= 0 {
		p := ps[at]
		j := 0
		for k, s := range p.sentences {
			if strings.Contains(s, in.Passage) || strings.Contains(in.Passage, s) {
				j = k
				break
			}
		}
		lo, hi := max(j-1, 0), min(j+2, len(p.sentences))
		ctx := strings.Join(p.sentences[lo:hi], sep(lb))
		out = append(out, lb.context+" "+quote(sentence.Clip(ctx, 600)))
		if h := headingAbove(ps, at); h != "" {
			out = append(out, lb.section+" "+quote(h))
		}
	}
	terms := uniq(sentence.Terms(in.Passage))
	// Definitions elsewhere.
	var defs []string
	seen := map[string]bool{}
	for _, term := range terms {
		for i, p := range ps {
			if i == at || p.Type == "heading" {
				continue
			}
			for _, s := range p.sentences {
				if len(defs) == 3 || seen[s] {
					continue
				}
				ls := strings.ToLower(s)
				k := strings.Index(ls, term)
				if k < 0 {
					continue
				}
				for _, cue := range defCues {
					if c := strings.Index(ls[k+len(term):], cue); c >= 0 && c <= 12 {
						defs = append(defs, "- "+quote(sentence.Clip(s, 300)))
						seen[s] = true
						break
					}
				}
			}
		}
	}
	if len(defs) > 0 {
		out = append(out, lb.defs)
		out = append(out, defs...)
	}
	// Related headings.
	own := ""
	if at >= 0 {
		own = headingAbove(ps, at)
	}
	type scoredH struct {
		text  string
		score int
	}
	var hs []scoredH
	for _, p := range ps {
		if p.Type != "heading" || p.Text == own {
			continue
		}
		if n := overlap(terms, sentence.Terms(p.Text)); n > 0 {
			hs = append(hs, scoredH{p.Text, n})
		}
	}
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].score > hs[j].score })
	if len(hs) > 0 {
		var names []string
		for i := 0; i < len(hs) && i < 3; i++ {
			names = append(names, quote(hs[i].text))
		}
		out = append(out, lb.related+" "+strings.Join(names, sep(lb)))
	}
	// The question.
	if q := strings.TrimSpace(in.Question); q != "" {
		qt := uniq(sentence.Terms(q))
		type scoredS struct {
			text  string
			score int
		}
		var ss []scoredS
		for _, p := range ps {
			if p.Type == "heading" {
				continue
			}
			for _, s := range p.sentences {
				st := sentence.Terms(s)
				if n := overlap(qt, st)*3 + overlap(terms, st); overlap(qt, st) > 0 {
					ss = append(ss, scoredS{s, n})
				}
			}
		}
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].score > ss[j].score })
		if len(ss) > 0 {
			out = append(out, lb.question)
			for i := 0; i < len(ss) && i < 2; i++ {
				out = append(out, "- "+quote(sentence.Clip(ss[i].text, 300)))
			}
		}
	}
	if len(out) == 1 || (at < 0 && len(out) == 1) {
		out = append(out, lb.none)
	}
	return strings.Join(out, "\n") + "\n"
}

type passage struct {
	textBlock
	index     int
	sentences []string
}

func sep(lb labels) string {
	if lb.open == "「" {
		return ""
	}
	return " "
}

func headingAbove(ps []passage, at int) string {
	for i := at - 1; i >= 0; i-- {
		if ps[i].Type == "heading" {
			return ps[i].Text
		}
	}
	return ""
}

func cjkShare(s string) bool {
	var cjk, all int
	for _, c := range s {
		if c == ' ' {
			continue
		}
		all++
		if sentence.IsCJK(c) {
			cjk++
		}
	}
	return all > 0 && cjk*2 >= all
}

func uniq(ts []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func overlap(a, b []string) int {
	set := map[string]bool{}
	for _, t := range b {
		set[t] = true
	}
	n := 0
	for _, t := range a {
		if set[t] {
			n++
		}
	}
	return n
}
