package flowdoc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheckJSON checks CheckJSON against encoding/json: what it accepts is
// valid JSON and UTF-8; what valid JSON it refuses, it refuses for one of
// its own rules (a member given twice, a lone surrogate, nesting).
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1,"a",{"b":null}]`, `{"a":1,"a":2}`, `"\ud800"`, `"\ud83d\ude00"`, `"\udc00\ud800"`,
		"\"\xff\"", `{"a":{"b":[{"c":1,"c":2}]}}`, strings.Repeat("[", 150) + strings.Repeat("]", 150), `1 2`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := CheckJSON(data)
		if err == nil {
			if !json.Valid(data) || !utf8.Valid(data) {
				t.Fatalf("accepted %q", data)
			}
			return
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) == 0 {
			t.Fatalf("error %T %v", err, err)
		}
		if !json.Valid(data) || !utf8.Valid(data) {
			return
		}
		for _, p := range ve.Problems {
			if p.Rule != "duplicate field" && !strings.Contains(p.Rule, "surrogate") && !strings.Contains(p.Rule, "nesting deeper") {
				t.Fatalf("valid JSON %q refused: %v", data, err)
			}
		}
	})
}
