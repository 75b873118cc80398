package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/foliodev/folio/internal/llm"
)

// Echo is a deterministic test double that answers with its input: tests
// that need a provider whose answer they can predict from the prompt (the
// gateway's streaming, booking and JSON extraction) use it. It is not
// reachable from configuration. Its rules:
//
//  1. The source is the content of the last user message ("" when none).
//  2. A text request answers the source tidied: runs of whitespace become
//     one space, the ends are trimmed, the first letter of every sentence is
//     upper-cased (a sentence starts the text or follows '.', '!' or '?' and a
//     space), and a final '.' is added unless the text already ends with
//     terminal punctuation (. ! ? 。 ！ ？ … or a closing quote/bracket). An
//     empty source answers "Nothing to rewrite."
//  3. A JSON request answers the first JSON object found in the source (the
//     text from its first '{' to its last '}', when that is a valid object),
//     compacted; otherwise {"text":"<rule 2 applied to the source>"}.
//  4. With MaxTokens > 0 a text answer keeps the longest run of whole words
//     whose CountTokens fits, and the finish reason is "length"; JSON answers
//     are never cut.
//  5. Usage: input is CountInput(messages), output is CountTokens(answer).
type Echo struct {
	model string
}

var _ llm.Provider = (*Echo)(nil)

// NewEcho returns the echo double reporting model ("echo-1" when "").
func NewEcho(model string) *Echo {
	if model == "" {
		model = "echo-1"
	}
	return &Echo{model: model}
}

// Name returns "echo".
func (p *Echo) Name() string { return "echo" }

// Model returns the reported model name.
func (p *Echo) Model() string { return p.model }

// Stream answers req by the rules on Echo.
func (p *Echo) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, &llm.Error{Code: llm.CodeStreamCut, Provider: "echo", Msg: "cancelled", Err: err}
	}
	answer, finish := EchoAnswer(req)
	return llm.NewPieceStream(ctx, "echo", llm.SplitWords(answer), finish,
		llm.Usage{Input: llm.CountInput(req.Messages), Output: llm.CountTokens(answer)}), nil
}

// EchoAnswer returns Echo's answer to req and its finish reason.
func EchoAnswer(req llm.Request) (answer, finish string) {
	src := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.User {
			src = req.Messages[i].Content
			break
		}
	}
	if req.JSON {
		if obj, ok := firstObject(src); ok {
			return obj, "stop"
		}
		b, _ := json.Marshal(map[string]string{"text": Tidy(src)})
		return string(b), "stop"
	}
	out := Tidy(src)
	if req.MaxTokens > 0 && llm.CountTokens(out) > int64(req.MaxTokens) {
		var b strings.Builder
		for _, w := range llm.SplitWords(out) {
			if llm.CountTokens(b.String()+w) > int64(req.MaxTokens) {
				break
			}
			b.WriteString(w)
		}
		return strings.TrimRight(b.String(), " "), "length"
	}
	return out, "stop"
}

// Tidy applies Echo's text rule (rule 2 on Echo).
func Tidy(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "Nothing to rewrite."
	}
	var b strings.Builder
	start := true
	prev := ' '
	for _, r := range s {
		if start && unicode.IsLetter(r) {
			r = unicode.ToUpper(r)
			start = false
		} else if start && !unicode.IsSpace(r) && !strings.ContainsRune(`"'“‘(`, r) {
			start = false
		}
		if r == ' ' && strings.ContainsRune(".!?", prev) {
			start = true
		}
		b.WriteRune(r)
		prev = r
	}
	out := b.String()
	last, _ := utf8.DecodeLastRuneInString(out)
	if !strings.ContainsRune(".!?。！？…\"'”’)]」』", last) {
		out += "."
	}
	return out
}

// firstObject returns the compacted JSON object spanning the first '{' to
// the last '}' of s, when that is valid.
func firstObject(s string) (string, bool) {
	i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || j < i {
		return "", false
	}
	var v map[string]json.RawMessage
	if json.Unmarshal([]byte(s[i:j+1]), &v) != nil {
		return "", false
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(s[i:j+1])) != nil {
		return "", false
	}
	return b.String(), true
}
