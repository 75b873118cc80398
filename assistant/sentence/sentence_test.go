package sentence

import (
	"fmt"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Folio stores versions. Each is immutable! Really?", "[Folio stores versions. Each is immutable! Really?]"},
		{"版本不可变。草稿可以改！对吗？", "[版本不可变。 草稿可以改！ 对吗？]"},
		{"Version 1.5 is out. 它说“好。”然后走了", "[Version 1.5 is out. 它说“好。” 然后走了]"},
		{"no end", "[no end]"},
	} {
		if got := fmt.Sprint(Split(tc.in)); got != tc.want {
			t.Errorf("Split(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestTerms(t *testing.T) {
	if got := fmt.Sprint(Terms("The Pebble store, and pebble-db 2")); got != "[pebble store pebble-db]" {
		t.Errorf("latin terms = %s", got)
	}
	if got := fmt.Sprint(Terms("数据库的版本")); got != "[数据 据库 版本]" {
		t.Errorf("CJK terms = %s", got)
	}
}
