package assistant

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrNoJSON is wrapped by ExtractJSON's errors.
var ErrNoJSON = errors.New("assistant: no valid JSON object in the answer")

// ExtractJSON finds one JSON object in a model's answer: the first valid
// object inside a ``` code fence, else the first valid object in the text.
// Objects are delimited by matching braces, ignoring braces inside JSON
// strings; a balanced but invalid candidate is skipped whole (so an object
// nested in it is not mistaken for the answer). The result is compacted.
// The error (wrapping ErrNoJSON) says what was wrong, to carry into a
// repair request.
func ExtractJSON(text string) (json.RawMessage, error) {
	var firstErr error
	for _, block := range fences(text) {
		obj, err := scanObjects(block)
		if err == nil {
			return obj, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	obj, err := scanObjects(text)
	if err == nil {
		return obj, nil
	}
	if firstErr == nil || !errors.Is(err, errNoCandidate) {
		firstErr = err
	}
	return nil, firstErr
}

var errNoCandidate = fmt.Errorf("%w: no '{' found", ErrNoJSON)

// fences returns the contents of ``` blocks (the info string, like "json",
// dropped). An unclosed fence runs to the end of the text.
func fences(text string) []string {
	var out []string
	for {
		i := strings.Index(text, "```")
		if i < 0 {
			return out
		}
		rest := text[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 && !strings.ContainsAny(rest[:nl], "{") {
			rest = rest[nl+1:]
		}
		j := strings.Index(rest, "```")
		if j < 0 {
			return append(out, rest)
		}
		out = append(out, rest[:j])
		text = rest[j+3:]
	}
}

// scanObjects returns the first balanced, valid JSON object in s.
func scanObjects(s string) (json.RawMessage, error) {
	var firstErr error
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '{')
		if k < 0 {
			break
		}
		start := i + k
		end, ok := matchBrace(s, start)
		if !ok {
			if firstErr == nil {
				firstErr = fmt.Errorf("%w: the object starting at byte %d is not closed (the answer may have been cut off)", ErrNoJSON, start)
			}
			break
		}
		cand := s[start : end+1]
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(cand)); err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%w: the object at byte %d is invalid: %v", ErrNoJSON, start, err)
			}
			i = end + 1
			continue
		}
		return json.RawMessage(buf.Bytes()), nil
	}
	if firstErr == nil {
		return nil, errNoCandidate
	}
	return nil, firstErr
}

// matchBrace returns the index of the '}' closing the '{' at start, treating
// double-quoted strings (with backslash escapes) as opaque. A mismatched
// closing bracket ends the candidate early; json.Compact then reports it.
func matchBrace(s string, start int) (int, bool) {
	var stack []byte
	inStr, esc := false, false
	for i := start; i < len(s); i++ {
		c := s[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '}', ']':
			if stack[len(stack)-1] != c {
				return i, true
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i, true
			}
		}
	}
	return 0, false
}
