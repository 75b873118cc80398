package assistant

import (
	"reflect"
	"strings"
	"testing"
)

var groundingMemory = []GroundingMemory{
	{Key: "mi-join", Statement: "2019年我加入了星火公司，负责搜索。"},
	{Key: "mi-city", Statement: "我在杭州住了五年。"},
	{Key: "mi-tokyo", Statement: "2021年我去了东京。"},
	{Key: "mi-en", Statement: "In 2017 I moved to Lisbon."},
}

var groundingInput = []string{"把这一段改得更口语一些。", "我一直在做搜索。去年的项目让我学到很多。"}

func TestGroundingPassesOnlySupportedFacts(t *testing.T) {
	out := "2019年，我加入了星火公司，在杭州住了五年，一直在做搜索。In 2017 I moved to Lisbon."
	g := Ground(out, groundingInput, groundingMemory)
	if !g.Pass {
		t.Fatalf("supported output failed: %+v", g)
	}
	if want := []string{"mi-city", "mi-en", "mi-join"}; !reflect.DeepEqual(g.UsedMemory, want) {
		t.Errorf("used memory %v, want %v", g.UsedMemory, want)
	}
	if g.Checked < 2 {
		t.Errorf("checked %d claims", g.Checked)
	}
}

func TestGroundingFailsOnAnInventedYearOrPlace(t *testing.T) {
	for out, want := range map[string]string{
		"2020年我加入了星火公司。":             "time 2020",
		"2019年我在上海加入了星火公司。":          "place 上海",
		"我在杭州住了八年。":                  "number 8 年",
		"我是一名医生。":                    "role 医生",
		"In 2016 I moved to Lisbon.": "time 2016",
		"2021年我加入了星火公司。":             "time 2021 with 星火公司",
	} {
		g := Ground(out, groundingInput, groundingMemory)
		if g.Pass || len(g.Claims) != 1 {
			t.Errorf("%s: %+v, want one unsupported claim", out, g)
			continue
		}
		if !contains(g.Claims[0].Unsupported, want) {
			t.Errorf("%s: unsupported %v, want %q", out, g.Claims[0].Unsupported, want)
		}
		if note := g.RetryNote(); !strings.Contains(note, out) || !strings.Contains(note, want) {
			t.Errorf("retry note does not name the claim: %s", note)
		}
	}
}

func TestGroundingMetamorphicYear(t *testing.T) {
	out := "2019年我加入了星火公司，负责搜索。"
	if g := Ground(out, groundingInput, groundingMemory); !g.Pass || !reflect.DeepEqual(g.UsedMemory, []string{"mi-join"}) {
		t.Fatalf("with the memory as recorded: %+v", g)
	}
	changed := append([]GroundingMemory(nil), groundingMemory...)
	changed[0].Statement = strings.Replace(changed[0].Statement, "2019", "2018", 1)
	g := Ground(out, groundingInput, changed)
	if g.Pass || !contains(g.Claims[0].Unsupported, "time 2019") {
		t.Fatalf("after changing the year in the memory: %+v", g)
	}
}

func TestGroundingInputSupportsWithoutMemory(t *testing.T) {
	in := []string{"2015年我在成都读研究生，读了三年。"}
	g := Ground("2015年我在成都读了三年研究生。", in, nil)
	if !g.Pass || len(g.UsedMemory) != 0 {
		t.Fatalf("%+v", g)
	}
	// Third-person and anchorless sentences are not claims.
	if g := Ground("他2020年去了巴黎。我很喜欢写作。", nil, nil); !g.Pass || g.Checked != 0 {
		t.Fatalf("%+v", g)
	}
	// A negated claim is still a claim.
	if g := Ground("我从来没有去过巴黎。", nil, nil); g.Pass {
		t.Fatalf("an unsupported negated claim passed: %+v", g)
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
