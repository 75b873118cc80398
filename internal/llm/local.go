package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// LocalModel is the model name the local provider reports by default.
const LocalModel = "folio-local-1"

// Local is the deterministic offline provider. The same request always gets
// the same answer, streamed word by word, by these rules:
//
//  1. The source is the content of the last user message ("" when none).
//  2. A text request answers the source rewritten: runs of whitespace become
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
//  5. Usage: input is CountInput(messages), output is CountTokens(answer),
//     total their sum. Usage is always reported.
type Local struct {
	model string
}

var _ Provider = (*Local)(nil)

// NewLocal returns the local provider reporting model (LocalModel when "").
func NewLocal(model string) *Local {
	if model == "" {
		model = LocalModel
	}
	return &Local{model: model}
}

// Name returns "local".
func (p *Local) Name() string { return "local" }

// Model returns the reported model name.
func (p *Local) Model() string { return p.model }

// Stream answers req by the rules on Local.
func (p *Local) Stream(ctx context.Context, req Request) (Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("local", err)
	}
	answer, finish := LocalAnswer(req)
	return &localStream{
		ctx:    ctx,
		pieces: splitWords(answer),
		finish: finish,
		usage:  Usage{Input: CountInput(req.Messages), Output: CountTokens(answer)},
	}, nil
}

// LocalAnswer returns the local provider's answer to req and its finish
// reason, without streaming.
func LocalAnswer(req Request) (answer, finish string) {
	src := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == User {
			src = req.Messages[i].Content
			break
		}
	}
	if req.JSON {
		if obj, ok := firstObject(src); ok {
			return obj, "stop"
		}
		b, _ := json.Marshal(map[string]string{"text": Rewrite(src)})
		return string(b), "stop"
	}
	out := Rewrite(src)
	if req.MaxTokens > 0 && CountTokens(out) > int64(req.MaxTokens) {
		var b strings.Builder
		for _, w := range splitWords(out) {
			if CountTokens(b.String()+w) > int64(req.MaxTokens) {
				break
			}
			b.WriteString(w)
		}
		return strings.TrimRight(b.String(), " "), "length"
	}
	return out, "stop"
}

// Rewrite applies the local provider's text rule (rule 2 on Local).
func Rewrite(s string) string {
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

// splitWords splits s into pieces that each end after a space (the last
// piece may not), so joining them gives s back.
func splitWords(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func ctxError(provider string, err error) *Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeTimeout, Provider: provider, Err: err}
	}
	return &Error{Code: CodeStreamCut, Provider: provider, Msg: "cancelled", Err: err}
}

type localStream struct {
	ctx    context.Context
	pieces []string
	finish string
	usage  Usage
	ended  bool
	closed bool
}

func (s *localStream) Next() (string, error) {
	if err := s.ctx.Err(); err != nil {
		return "", ctxError("local", err)
	}
	if s.closed {
		return "", &Error{Code: CodeStreamCut, Provider: "local", Msg: "stream closed"}
	}
	if len(s.pieces) == 0 {
		s.ended = true
		return "", io.EOF
	}
	p := s.pieces[0]
	s.pieces = s.pieces[1:]
	return p, nil
}

func (s *localStream) Usage() (Usage, bool) {
	if !s.ended {
		return Usage{}, false
	}
	u := s.usage
	u.Total = u.Input + u.Output
	return u, true
}

func (s *localStream) FinishReason() string {
	if !s.ended {
		return ""
	}
	return s.finish
}

func (s *localStream) Close() error { s.closed = true; return nil }
