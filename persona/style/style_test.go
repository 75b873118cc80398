package style

import (
	"crypto/sha256"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/persona/source"
)

// doc builds a source document from blocks written as "p:text",
// "h:text", "l:text", "q:text" or "c:text".
func doc(tb testing.TB, name string, blocks ...string) source.Document {
	tb.Helper()
	pin := source.Pin{Doc: name, Label: "v1.r0", Version: source.VersionID(sha256.Sum256([]byte(name))),
		Fingerprint: flowdoc.Fingerprint(sha256.Sum256([]byte("fp" + name)))}
	d := source.Document{Pin: pin, TopLevel: len(blocks)}
	for i, b := range blocks {
		kind, text, _ := strings.Cut(b, ":")
		t := map[string]flowdoc.BlockType{"p": flowdoc.Paragraph, "h": flowdoc.Heading, "l": flowdoc.List, "q": flowdoc.Quote, "c": flowdoc.Code}[kind]
		d.Blocks = append(d.Blocks, source.Block{ID: fmt.Sprintf("b%d", i), Type: t, Text: text})
	}
	return d
}

func TestPunctuationCountsFullAndHalfWidthSeparately(t *testing.T) {
	// 20 non-space characters: 中文，中文。中文,中文. + "abc, def." (7 non-space letters+marks)
	d := doc(t, "a", "p:我在北京，也在上海。然后呢？OK, fine.")
	p, err := Build([]source.Document{d})
	if err != nil {
		t.Fatal(err)
	}
	chars := float64(p.Feature(DimLanguage, "characters").Value)
	want := map[string]float64{
		"punct_full:，": 1, "punct_full:。": 1, "punct_full:？": 1, "punct_half:,": 1, "punct_half:.": 1,
	}
	for name, n := range want {
		f := p.Feature(DimFormat, name)
		if f == nil {
			t.Fatalf("no feature %s", name)
		}
		if got := f.Value; math.Abs(got-round(n*1000/chars)) > 1e-9 {
			t.Errorf("%s = %v per 1,000, want %v", name, got, round(n*1000/chars))
		}
	}
	if f := p.Feature(DimFormat, "fullwidth_punctuation"); f.Value != round(3*1000/chars) {
		t.Errorf("fullwidth total %v, want %v", f.Value, round(3*1000/chars))
	}
	if f := p.Feature(DimFormat, "halfwidth_punctuation"); f.Value != round(2*1000/chars) {
		t.Errorf("halfwidth total %v, want %v", f.Value, round(2*1000/chars))
	}
	// The evidence of the full-width comma is the comma.
	ev := p.Feature(DimFormat, "punct_full:，").Evidence[0]
	if got := source.Slice(d.Blocks[ev.Block[1]-'0'].Text, ev.Span); got != "，" {
		t.Errorf("evidence of ， is %q", got)
	}
}

func TestSentenceAndParagraphPercentiles(t *testing.T) {
	// Sentences of 5, 10, 15, 20 and 25 characters.
	var sents []string
	for _, n := range []int{5, 10, 15, 20, 25} {
		sents = append(sents, strings.Repeat("字", n-1)+"。")
	}
	d := doc(t, "a", "p:"+strings.Join(sents[:2], ""), "p:"+strings.Join(sents[2:], ""))
	p, err := Build([]source.Document{d})
	if err != nil {
		t.Fatal(err)
	}
	f := p.Feature(DimSyntax, "sentence_length")
	if want := []float64{7, 10, 15, 20, 23}; !reflect.DeepEqual(f.Percentiles, want) {
		t.Errorf("sentence percentiles %v, want %v", f.Percentiles, want)
	}
	pf := p.Feature(DimParagraph, "paragraph_length")
	if pf.Percentiles[0] != 19.5 || pf.Percentiles[4] != 55.5 || pf.Value != 37.5 {
		t.Errorf("paragraph percentiles %v", pf.Percentiles)
	}
	// The median sentence is cited.
	ev := f.Evidence[0]
	if got := source.Slice(d.Blocks[1].Text, ev.Span); ev.Block != "b1" || got != sents[2] {
		t.Errorf("median evidence %s %q", ev.Block, got)
	}
}

func TestStructureAndNarrativeRates(t *testing.T) {
	d := doc(t, "a", "h:标题一", "p:我觉得这件事很好。我们后来又做了一次。", "l:第一项", "l:第二项", "q:引用的话", "c:fmt.Println()", "h:标题二")
	p, err := Build([]source.Document{d})
	if err != nil {
		t.Fatal(err)
	}
	chars := p.Feature(DimLanguage, "characters").Value
	for name, n := range map[string]float64{"heading_rate": 2, "list_item_rate": 2, "quote_rate": 1, "code_rate": 1} {
		if got := p.Feature(DimStructure, name).Value; got != round(n*1000/chars) {
			t.Errorf("%s = %v, want %v", name, got, round(n*1000/chars))
		}
	}
	fp := p.Feature(DimNarrative, "first_person_rate")
	if fp.Value != round(2*1000/chars) {
		t.Errorf("first person %v, want %v", fp.Value, round(2*1000/chars))
	}
	if share := p.Feature(DimNarrative, "first_person_plural_share").Value; share != 0.5 {
		t.Errorf("plural share %v", share)
	}
	if p.Feature(DimNarrative, "time_marker_rate").Value == 0 {
		t.Error("后来 not counted as a time marker")
	}
}

func TestFunctionWordsLongestMatch(t *testing.T) {
	var c counts
	countFunctionWords("但是我们的书。The cat and the dog", &c)
	want := map[string]int{"zh:但是": 1, "zh:我们": 1, "zh:的": 1, "en:the": 2, "en:and": 1}
	if !reflect.DeepEqual(c.fw, want) {
		t.Errorf("function words %v, want %v", c.fw, want)
	}
	// 但是 我们 的 书 = 6 characters; The cat and the dog = 5 words.
	if c.units != 11 {
		t.Errorf("units %d, want 11", c.units)
	}
}

// corpus returns n articles in one of two synthetic voices: "plain"
// leans on 的 了 是 我, "classical" on 之 其 而 于 以. Content words rotate
// so that the voices differ in function words only.
func corpus(tb testing.TB, voice string, n, offset int) []source.Document {
	content := []string{"山水", "城市", "工作", "读书", "朋友", "旅行", "季节", "清晨", "夜晚", "记忆", "计划", "方法"}
	fws := map[string][]string{
		"plain":     {"的", "了", "是", "我", "的", "也"},
		"classical": {"之", "其", "而", "于", "以", "之"},
	}[voice]
	var out []source.Document
	for a := 0; a < n; a++ {
		var paras []string
		for p := 0; p < 6; p++ {
			var sb strings.Builder
			for s := 0; s < 5; s++ {
				for w := 0; w < 6; w++ {
					k := (a+offset)*31 + p*7 + s*3 + w
					sb.WriteString(content[k%len(content)])
					if (k+a)%3 != 0 {
						sb.WriteString(fws[(k*5+a)%len(fws)])
					}
				}
				sb.WriteString("。")
			}
			paras = append(paras, "p:"+sb.String())
		}
		out = append(out, doc(tb, fmt.Sprintf("%s-%d", voice, a+offset), paras...))
	}
	return out
}

func TestDeltaPrefersTheAuthorsVoice(t *testing.T) {
	p, err := Build(corpus(t, "plain", 8, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.FunctionWords.Calibration) != 8 {
		t.Fatalf("calibration %v", p.FunctionWords.Calibration)
	}
	own := p.CloseDocument(corpus(t, "plain", 1, 100)[0])
	other := p.CloseDocument(corpus(t, "classical", 1, 100)[0])
	if !(own.Delta < other.Delta) {
		t.Fatalf("delta of the author's own voice %v is not below the other voice's %v", own.Delta, other.Delta)
	}
	if own.Percentile < 0.25 || other.Percentile != 0 {
		t.Errorf("percentiles: own %v, other %v", own.Percentile, other.Percentile)
	}
	if !own.Reliable {
		t.Errorf("a full article is unreliable: %+v", own)
	}
	if short := p.Close("我的书。"); short.Reliable {
		t.Errorf("a four-character text is reliable: %+v", short)
	}
}

func TestDeltaUncalibratedWithFewSources(t *testing.T) {
	p, err := Build(corpus(t, "plain", 2, 0))
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Close("我的书是好的。"); c.Percentile != -1 {
		t.Errorf("percentile %v with 2 sources, want -1", c.Percentile)
	}
	found := false
	for _, u := range p.Uncertainties {
		found = found || u.Topic == "closeness"
	}
	if !found {
		t.Errorf("no closeness uncertainty in %+v", p.Uncertainties)
	}
}

func TestBuildIsDeterministicAndEvidenced(t *testing.T) {
	docs := append(corpus(t, "plain", 3, 0), doc(t, "x", "h:第一部分", "p:我在 2019 年开始写作，那时候我在北京。后来我搬到了上海！",
		"l:一项", "l:二项", "l:三项", "p:为什么要写？因为我想记录。"))
	a, err := Build(docs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(docs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two builds of the same sources differ")
	}
	byDoc := map[string]source.Document{}
	for _, d := range docs {
		byDoc[d.Pin.Doc] = d
	}
	checkEv := func(what string, ev []source.Evidence) {
		if len(ev) == 0 {
			t.Errorf("%s has no evidence", what)
		}
		for _, e := range ev {
			if e.Block == "" {
				if e.Fingerprint != byDoc[e.Doc].Pin.Fingerprint.String()[:16] {
					t.Errorf("%s: article evidence with fingerprint %s", what, e.Fingerprint)
				}
				continue
			}
			if !e.Verify(byDoc[e.Doc]) {
				t.Errorf("%s: evidence %+v does not verify", what, e)
			}
		}
	}
	for _, d := range a.Dimensions {
		for _, f := range d.Features {
			checkEv(d.Name+"."+f.Name, f.Evidence)
		}
	}
	for _, r := range a.Rules {
		checkEv("rule "+r.ID, r.Evidence)
		if r.Weight < 0.5 || r.Weight > 1 {
			t.Errorf("rule %s weight %v", r.ID, r.Weight)
		}
	}
	for _, pt := range a.Patterns {
		checkEv("pattern "+pt.Text, pt.Evidence)
	}
	for _, u := range a.Uncertainties {
		checkEv("uncertainty "+u.Topic, u.Evidence)
	}
	if len(a.Dimensions) != 6 || a.Learner != LearnerVersion || a.Summary == "" {
		t.Errorf("profile shape: %d dimensions, learner %q, summary %q", len(a.Dimensions), a.Learner, a.Summary)
	}
}

func TestPatternsNeedTwoSources(t *testing.T) {
	docs := []source.Document{
		doc(t, "a", "p:说到底，这是一个选择。独角兽只在这里出现。"),
		doc(t, "b", "p:说到底，写作是一种练习。"),
		doc(t, "c", "p:说到底，没有捷径。"),
	}
	p, err := Build(docs)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, pt := range p.Patterns {
		texts = append(texts, pt.Kind+":"+pt.Text)
		if pt.Sources < 2 {
			t.Errorf("pattern %q from %d source(s)", pt.Text, pt.Sources)
		}
		if strings.Contains(pt.Text, "独角") {
			t.Errorf("pattern %q appears in one source only", pt.Text)
		}
	}
	if !contains(texts, "ngram:说到底") || !contains(texts, "opening:说到") {
		t.Errorf("patterns %v lack 说到底 and the opening 说到", texts)
	}
	if contains(texts, "ngram:说到") {
		t.Errorf("patterns %v keep 说到 inside 说到底", texts)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestRulesFollowTheSources(t *testing.T) {
	short := []source.Document{
		doc(t, "a", "p:我来了。我看见了。我写了。", "p:天晴。风停。"),
		doc(t, "b", "p:我走了。雨下了。", "p:灯灭。夜深。"),
	}
	p, err := Build(short)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]float64{}
	for _, r := range p.Rules {
		ids[r.ID] = r.Weight
	}
	for _, want := range []string{"language.chinese", "syntax.short_sentences", "paragraph.short", "structure.no_headings", "format.fullwidth", "narrative.first_person"} {
		if ids[want] != 1 {
			t.Errorf("rule %s weight %v, want 1 (rules %v)", want, ids[want], ids)
		}
	}
	if _, ok := ids["syntax.long_sentences"]; ok {
		t.Errorf("long sentences rule on short sentences")
	}
}

func TestProseNeverRemovesEvidence(t *testing.T) {
	p, err := Build(corpus(t, "plain", 3, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.WithProse(Prose{Summary: "x", Rules: map[string]string{"no.such.rule": "y"}}); err == nil {
		t.Fatal("prose about an unknown rule was accepted")
	}
	id := p.Rules[0].ID
	q, err := p.WithProse(Prose{Provider: "openai", Model: "m", Prompt: "style-prose.v1", Summary: "短句、口语。", Rules: map[string]string{id: "解释"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Prose != nil {
		t.Fatal("WithProse changed the original")
	}
	q.Prose = nil
	if !reflect.DeepEqual(p, q) {
		t.Fatal("adding prose changed the measured profile")
	}
	bad := p
	bad.Rules = append([]Rule(nil), p.Rules...)
	bad.Rules[0].Evidence = nil
	if err := bad.Validate(); err == nil {
		t.Fatal("a rule without evidence validated")
	}
}

func TestNoSources(t *testing.T) {
	if _, err := Build([]source.Document{doc(t, "a", "c:only code")}); err != ErrNoSources {
		t.Fatalf("err %v, want ErrNoSources", err)
	}
}
