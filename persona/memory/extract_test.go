package memory

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// golden is one case of testdata/extract.json: a text and the facts
// Extract must find (type, time, places, organisations, numbers, role).
type golden struct {
	Text  string `json:"text"`
	Facts []struct {
		Type    string   `json:"type"`
		Time    *Time    `json:"time"`
		Places  []string `json:"places"`
		Orgs    []string `json:"orgs"`
		Numbers []Number `json:"numbers"`
		Role    string   `json:"role"`
	} `json:"facts"`
}

func TestExtractGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/extract.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []golden
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got := Extract(c.Text)
		if len(got) != len(c.Facts) {
			t.Errorf("%s\n  got %d facts %+v, want %d", c.Text, len(got), got, len(c.Facts))
			continue
		}
		for i, w := range c.Facts {
			g := got[i]
			if g.Type != w.Type || !reflect.DeepEqual(g.Time, w.Time) || !sameStrings(g.Places, w.Places) ||
				!sameStrings(g.Orgs, w.Orgs) || !sameNumbers(g.Numbers, w.Numbers) || g.Role != w.Role {
				t.Errorf("%s\n  got  type=%s time=%v places=%q orgs=%q numbers=%v role=%q\n  want type=%s time=%v places=%q orgs=%q numbers=%v role=%q",
					c.Text, g.Type, g.Time, g.Places, g.Orgs, g.Numbers, g.Role, w.Type, w.Time, w.Places, w.Orgs, w.Numbers, w.Role)
			}
			if g.Statement == "" || []rune(c.Text)[g.Span.Start] != []rune(g.Statement)[0] {
				t.Errorf("%s: statement %q at %v", c.Text, g.Statement, g.Span)
			}
		}
	}
}

func sameStrings(a, b []string) bool { return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b) }
func sameNumbers(a, b []Number) bool { return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b) }

func TestClaimsKeepWhatMemoryDrops(t *testing.T) {
	for _, c := range []struct {
		text                     string
		negated, hedged, planned bool
	}{
		{"我从来没有去过日本。", true, false, false},
		{"我大概在2015年毕业。", false, true, false},
		{"我打算2025年搬到深圳。", false, false, true},
		{"I have never lived in Paris.", true, false, false},
		{"I might move to Berlin next year.", false, true, true},
	} {
		cl := Claims(c.text)
		if len(cl) != 1 {
			t.Errorf("%s: %d claims, want 1", c.text, len(cl))
			continue
		}
		if cl[0].Negated != c.negated || cl[0].Hedged != c.hedged || cl[0].Planned != c.planned {
			t.Errorf("%s: negated=%v hedged=%v planned=%v", c.text, cl[0].Negated, cl[0].Hedged, cl[0].Planned)
		}
		if len(Extract(c.text)) != 0 {
			t.Errorf("%s: memory keeps it", c.text)
		}
	}
}

func FuzzExtract(f *testing.F) {
	f.Add("2019年我加入了字节跳动公司，负责推荐系统。")
	f.Add("In March 2020, I moved to Seattle.")
	f.Add("我二〇一六年三月五日在北京市")
	f.Fuzz(func(t *testing.T, s string) {
		for _, fct := range Claims(s) {
			if fct.Span.Start < 0 || fct.Span.End > len([]rune(s)) || fct.Span.Start >= fct.Span.End {
				t.Fatalf("span %v outside %q", fct.Span, s)
			}
		}
	})
}
