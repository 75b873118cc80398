package reference

import (
	"reflect"
	"testing"
)

func docs(rs []Ranked) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Doc)
	}
	return out
}

func TestRankByCategoryTagsAndKeywords(t *testing.T) {
	cands := []Candidate{
		{Doc: "cooking", Title: "红烧肉的做法", Category: "生活", Tags: []string{"菜谱"}, Text: "先把五花肉切块。"},
		{Doc: "pebble", Title: "Pebble 的写放大", Category: "技术", Tags: []string{"存储", "LSM"}, Text: "LSM 树的压缩会带来写放大。"},
		{Doc: "bleve", Title: "中文全文检索", Category: "技术", Tags: []string{"检索"}, Text: "用二元分词做中文检索，单字查询也要命中。"},
		{Doc: "sqlite", Title: "SQLite 事务", Category: "技术", Tags: []string{"存储"}, Text: "事务与写前日志。"},
		{Doc: "travel", Title: "京都游记", Category: "旅行", Text: "秋天的京都。"},
		{Doc: "self", Title: "存储引擎的压缩", Category: "技术", Tags: []string{"存储"}},
	}
	req := Request{Doc: "self", Title: "存储引擎的压缩策略", Category: "技术", Tags: []string{"存储", "LSM"},
		Instruction: "帮我把这一段关于写放大的解释改清楚", Target: "LSM 树在压缩时会重写数据，这就是写放大。"}
	got := Rank(req, cands, 0)
	if want := []string{"pebble", "sqlite", "bleve"}; !reflect.DeepEqual(docs(got), want) {
		t.Fatalf("ranked %v, want %v (%+v)", docs(got), want, got)
	}
	if len(got[0].Reasons) < 3 {
		t.Errorf("reasons %v", got[0].Reasons)
	}
	// Deterministic, whatever the candidates' order.
	rev := append([]Candidate(nil), cands...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if again := Rank(req, rev, 0); !reflect.DeepEqual(again, got) {
		t.Fatalf("order of candidates changed the answer: %v", docs(again))
	}
}

func TestNothingRelatedNothingChosen(t *testing.T) {
	cands := []Candidate{{Doc: "a", Title: "红烧肉", Category: "生活"}, {Doc: "b", Title: "Kyoto in autumn", Category: "travel"}}
	if got := Rank(Request{Title: "存储引擎", Category: "技术"}, cands, 3); len(got) != 0 {
		t.Fatalf("unrelated candidates chosen: %v", docs(got))
	}
}

func TestKeywordsAloneRankAndLimit(t *testing.T) {
	cands := []Candidate{
		{Doc: "a", Text: "Writing about compaction in storage engines."},
		{Doc: "b", Text: "Compaction, compaction and storage engines and write amplification."},
		{Doc: "c", Text: "Storage."},
		{Doc: "d", Text: "Gardening."},
	}
	got := Rank(Request{Instruction: "explain write amplification during compaction"}, cands, 2)
	if want := []string{"b", "a"}; !reflect.DeepEqual(docs(got), want) {
		t.Fatalf("ranked %v, want %v", docs(got), want)
	}
}
