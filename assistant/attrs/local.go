package attrs

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/foliodev/folio/assistant/sentence"
	"github.com/foliodev/folio/internal/llm"
	"github.com/gosimple/unidecode"
)

// Local is the attributes engine of the local provider: deterministic,
// offline, extractive. It reads the user message Prompt builds and
// answers the JSON a model would:
//
//   - title: only for an article without a real title (empty, or a
//     placeholder such as "Untitled"): its first heading, else its first
//     sentence, within 80 runes; "" otherwise — it never rewrites a title;
//   - summary: the best sentences of the body, in their order, within
//     MaxSummary runes (200 when the text is mostly CJK). A sentence
//     scores the document frequencies of its terms (CJK bigrams and
//     words; see package sentence) over its length, plus a share for
//     terms of the title and for standing in the first paragraphs;
//   - slug: the title (the proposed one, when there is one) transliterated: Chinese characters as toneless
//     pinyin (github.com/mozillazg/go-pinyin), everything else through
//     Unicode transliteration (github.com/gosimple/unidecode), lower case,
//     words joined with '-';
//   - category: the existing category whose name's terms occur most in
//     the title and body, "" when none occurs;
//   - tags: the existing tags whose names occur in the title or body, most
//     frequent first, at most 5. It never invents a tag.
//
// Usage is counted like the local editor's: llm.CountInput of the
// messages, llm.CountTokens of the answer.
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
		return nil, &llm.Error{Code: llm.CodeBadRequest, Provider: "local", Msg: "the attributes engine reads the JSON request of attrs.Prompt",
			Err: errors.New("last message is not an attributes request")}
	}
	b, _ := json.Marshal(suggestLocal(in))
	ans := string(b)
	return llm.NewPieceStream(ctx, "local", []string{ans}, "stop",
		llm.Usage{Input: llm.CountInput(req.Messages), Output: llm.CountTokens(ans)}), nil
}

func suggestLocal(in request) answer {
	var texts []string
	for _, b := range in.Document {
		texts = append(texts, b.Text)
	}
	body := strings.Join(texts, "\n")
	freq := sentence.Frequencies(in.Title, body)
	title := proposeTitle(in.Title, in.Document)
	slugFrom := in.Title
	if title != "" {
		slugFrom = title
	}
	return answer{
		Title:    title,
		Summary:  summarize(in.Title, in.Document, freq),
		Slug:     Slugify(slugFrom),
		Category: bestCategory(in.Categories, freq, in.Title+"\n"+body),
		Tags:     matchTags(in.Tags, freq, in.Title+"\n"+body),
	}
}

// placeholderTitles are the titles an article has before its author
// gives it one (the editor's "Untitled" among them), compared folded.
var placeholderTitles = map[string]bool{"": true, "untitled": true, "untitled document": true, "无标题": true, "未命名": true, "新文档": true}

// proposeTitle is the local engine's title: for an article whose title is
// a placeholder, its first heading, else its first sentence (at most 80
// runes, cut at a word); "" for an article that has a title.
func proposeTitle(current string, doc []textBlock) string {
	if !placeholderTitles[strings.ToLower(strings.TrimSpace(current))] {
		return ""
	}
	for _, b := range doc {
		if b.Type == "heading" && strings.TrimSpace(b.Text) != "" {
			return clipTitle(b.Text)
		}
	}
	for _, b := range doc {
		for _, s := range sentence.Split(b.Text) {
			if s = strings.TrimSpace(s); s != "" {
				return clipTitle(strings.TrimRight(s, ".。!！?？;；"))
			}
		}
	}
	return ""
}

func clipTitle(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= 80 {
		return s
	}
	cut := string(r[:80])
	if i := strings.LastIndex(cut, " "); i > 40 {
		cut = cut[:i]
	}
	return cut + "…"
}

type scored struct {
	text  string
	order int
	score float64
}

func summarize(title string, doc []textBlock, freq map[string]int) string {
	titleTerms := map[string]bool{}
	for _, t := range sentence.Terms(title) {
		titleTerms[t] = true
	}
	var cands []scored
	var cjk, all int
	para := 0
	for _, b := range doc {
		if b.Type == "heading" {
			continue
		}
		para++
		for _, s := range sentence.Split(b.Text) {
			terms := sentence.Terms(s)
			if len(terms) < 2 {
				continue
			}
			for _, c := range s {
				all++
				if sentence.IsCJK(c) {
					cjk++
				}
			}
			var sc float64
			for _, t := range terms {
				sc += float64(freq[t])
				if titleTerms[t] {
					sc += 3
				}
			}
			sc /= float64(len(terms))
			if para <= 2 {
				sc *= 1.25 // the opening usually says what the article is about
			}
			cands = append(cands, scored{text: s, order: len(cands), score: sc})
		}
	}
	if len(cands) == 0 {
		if title == "" {
			return "—"
		}
		return title
	}
	budget := MaxSummary
	if all > 0 && cjk*2 > all {
		budget = 200
	}
	byScore := append([]scored(nil), cands...)
	sort.SliceStable(byScore, func(i, j int) bool { return byScore[i].score > byScore[j].score })
	var chosen []scored
	used := 0
	for _, c := range byScore {
		n := utf8.RuneCountInString(c.text)
		if len(chosen) == 3 || (len(chosen) > 0 && used+n+1 > budget) {
			continue
		}
		chosen = append(chosen, c)
		used += n + 1
	}
	sort.Slice(chosen, func(i, j int) bool { return chosen[i].order < chosen[j].order })
	var parts []string
	for _, c := range chosen {
		parts = append(parts, c.text)
	}
	sep := " "
	if cjk*2 > all {
		sep = ""
	}
	return sentence.Clip(strings.Join(parts, sep), budget)
}

func bestCategory(cats []string, freq map[string]int, text string) string {
	best, bestScore := "", 0
	lower := strings.ToLower(text)
	for _, c := range cats {
		score := strings.Count(lower, strings.ToLower(strings.TrimSpace(c))) * 3
		for _, t := range sentence.Terms(c) {
			score += freq[t]
		}
		if score > bestScore {
			best, bestScore = c, score
		}
	}
	return best
}

func matchTags(tags []string, freq map[string]int, text string) []string {
	lower := strings.ToLower(text)
	type hit struct {
		name string
		n    int
	}
	var hits []hit
	for _, t := range tags {
		name := strings.ToLower(strings.TrimSpace(t))
		if name == "" {
			continue
		}
		n := 0
		if sentence.HasCJK(name) {
			n = strings.Count(lower, name)
		} else if terms := sentence.Terms(name); len(terms) == 1 {
			n = freq[terms[0]] // whole words: "go" is not in "good"
		}
		if n == 0 {
			// All of a multi-term tag's terms occurring counts too.
			terms := sentence.Terms(t)
			if len(terms) > 1 {
				n = 1 << 30
				for _, term := range terms {
					n = min(n, freq[term])
				}
			}
		}
		if n > 0 {
			hits = append(hits, hit{t, n})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].n > hits[j].n })
	out := []string{}
	for _, h := range hits {
		if len(out) == 5 {
			break
		}
		out = append(out, h.name)
	}
	return out
}

// Slugify makes a URL slug of s: Chinese characters as toneless pinyin,
// other letters transliterated to ASCII, lower case, runs of anything
// else as one '-', at most MaxSlug bytes cut at a '-'.
func Slugify(s string) string {
	var words []string
	var other []rune
	flush := func() {
		if len(other) > 0 {
			words = append(words, unidecode.Unidecode(string(other)))
			other = other[:0]
		}
	}
	for _, c := range s {
		if unicode.Is(unicode.Han, c) {
			flush()
			if py := pinyinOf(c); py != "" {
				words = append(words, " "+py+" ")
			}
			continue
		}
		other = append(other, c)
	}
	flush()
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(strings.Join(words, "")) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(c)
			continue
		}
		dash = true
	}
	out := b.String()
	if len(out) > MaxSlug {
		out = out[:MaxSlug]
		if i := strings.LastIndexByte(out, '-'); i > MaxSlug/2 {
			out = out[:i]
		}
		out = strings.TrimRight(out, "-")
	}
	return out
}
