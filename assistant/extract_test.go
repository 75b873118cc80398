package assistant

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestExtractJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // "" means an error is expected
		err  string
	}{
		{"plain", `{"title": "A"}`, `{"title":"A"}`, ""},
		{"whitespace", "\n  {\"a\": 1}\n", `{"a":1}`, ""},
		{"json fence", "Here you go:\n```json\n{\"a\": [1, 2]}\n```\nAnything else?", `{"a":[1,2]}`, ""},
		{"bare fence", "```\n{\"a\": true}\n```", `{"a":true}`, ""},
		{"unclosed fence", "```json\n{\"a\": null}\n", `{"a":null}`, ""},
		{"fence wins over prose", `Example: {"x": 0}` + "\n```json\n{\"real\": 1}\n```", `{"real":1}`, ""},
		{"prose around", `Sure! The result is {"summary": "ok"} — hope it helps.`, `{"summary":"ok"}`, ""},
		{"braces in strings", `{"a": "}{ not a brace", "b": "{"}`, `{"a":"}{ not a brace","b":"{"}`, ""},
		{"escaped quotes", `{"a": "say \"}\" now", "b": "\\"}`, `{"a":"say \"}\" now","b":"\\"}`, ""},
		{"nested", `{"a": {"b": {"c": [1, {"d": 2}]}}}`, `{"a":{"b":{"c":[1,{"d":2}]}}}`, ""},
		{"invalid prose braces skipped", `Use {curly} braces: {"a": 1}`, `{"a":1}`, ""},
		{"unicode", `{"标题": "你好 🙂"}`, `{"标题":"你好 🙂"}`, ""},
		{"inner object of invalid outer is not the answer", `{"a": {"b": 1},}`, "", "invalid"},
		{"single quotes", `{'a': 1}`, "", "invalid"},
		{"cut off", `{"a": "long answer that was cut`, "", "not closed"},
		{"no object", "I cannot help with that.", "", "no '{'"},
		{"empty", "", "", "no '{'"},
		{"mismatched bracket", `{"a": [1}`, "", "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExtractJSON(tt.in)
			if tt.want != "" {
				if err != nil || string(got) != tt.want {
					t.Fatalf("got %s, %v; want %s", got, err, tt.want)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrNoJSON) || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("got %s, %v; want error containing %q", got, err, tt.err)
			}
		})
	}
}

func FuzzExtractJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, "```json\n{}\n```", `x {"a":"}"} y`, `{"a":{"b":1},}`, `{`, `"{"`, "```{```"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ExtractJSON(in)
		if err != nil {
			return
		}
		var obj map[string]any
		if json.Unmarshal(got, &obj) != nil {
			t.Fatalf("%q gave %q, not an object", in, got)
		}
	})
}
