package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/llm/localedit"
)

// LocalModel is the model name the local provider reports by default.
const LocalModel = "folio-local-1"

// Local is the deterministic offline provider: the rule-based editor of
// package localedit, which applies the six rules of the editing preset
// "六条文章强化规则" to Chinese and English text and never touches protected
// spans (numbers, dates, names, quotes, code, links, equations, first-person
// facts). The same request always gets the same answer, by these rules:
//
//  1. A request with a Task is an editing request. Whether the engine can
//     honour it is decided first: a writing preset, a persona, an
//     instruction such as 扩写 or "rewrite in a news style" (see
//     localedit.CanHonour), or an editing preset (Task.Preset) with a rule
//     the engine does not implement, or with no rules, cannot be honoured,
//     and the answer says so with the reason, never with a fake edit.
//     Otherwise the text is edited with the rules the instruction asks for,
//     restricted to the preset's rules and to Task.Rules when given. The
//     answer is one JSON object, whatever JSON says:
//     - a Task with Segments answers the localedit.Result;
//     - a Task with a Scope answers {"summary": …, "ops": […]}, the
//     writing assistant's answer form (see answerOps), so that the
//     assistant validates, repairs and stores it exactly as any model's;
//     nothing to change is {"summary": <the reason>, "ops": []}.
//  2. Without a Task, the source is the content of the last user message
//     ("" when none), edited with all six rules. A text request answers the
//     edited text (the source unchanged when no rule applies); a JSON
//     request answers the localedit.Result of the source as one segment.
//  3. With MaxTokens > 0 a text answer keeps the longest run of whole words
//     whose CountTokens fits, and the finish reason is "length"; JSON answers
//     are never cut.
//  4. Usage: input is CountInput(messages) plus, with a Task, the tokens of
//     its instruction and of the text it reads (its segments, or the plain
//     text of the scope's text blocks) and one message's framing; output is
//     CountTokens(answer); total their sum. Usage is always reported.
//  5. A request the engine refuses (more than localedit.MaxBytes of text,
//     invalid UTF-8, an unknown rule id in Task.Rules or language, a Task
//     with both Segments and a Scope, a Scope that does not fit its
//     blocks) fails with bad_request.
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
	answer, finish, err := LocalAnswer(req)
	if err != nil {
		return nil, &Error{Code: CodeBadRequest, Provider: "local", Msg: "the local editor refused the request", Err: err}
	}
	in := CountInput(req.Messages)
	if t := req.Task; t != nil {
		in += CountTokens(t.Instruction) + MessageOverhead
		for _, s := range taskText(t) {
			in += CountTokens(s)
		}
	}
	return &PieceStream{
		ctx:      ctx,
		provider: "local",
		pieces:   SplitWords(answer),
		finish:   finish,
		usage:    Usage{Input: in, Output: CountTokens(answer)},
	}, nil
}

// LocalAnswer returns the local provider's answer to req and its finish
// reason, without streaming.
func LocalAnswer(req Request) (answer, finish string, err error) {
	if t := req.Task; t != nil {
		if t.Scope != nil {
			if len(t.Segments) > 0 {
				return "", "", errors.New("a task holds segments or a scope, not both")
			}
			answer, err := answerOps(t)
			return answer, "stop", err
		}
		res, err := editTask(t)
		if err != nil {
			return "", "", err
		}
		b, err := json.Marshal(res)
		return string(b), "stop", err
	}
	src := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == User {
			src = req.Messages[i].Content
			break
		}
	}
	res, err := localedit.Edit(localedit.Request{Segments: []string{src}})
	if err != nil {
		return "", "", err
	}
	if req.JSON {
		b, err := json.Marshal(res)
		return string(b), "stop", err
	}
	out := res.Segments[0]
	if req.MaxTokens > 0 && CountTokens(out) > int64(req.MaxTokens) {
		var b strings.Builder
		for _, w := range SplitWords(out) {
			if CountTokens(b.String()+w) > int64(req.MaxTokens) {
				break
			}
			b.WriteString(w)
		}
		return strings.TrimRight(b.String(), " "), "length", nil
	}
	return out, "stop", nil
}

// editTask runs a Task with Segments through taskRules and the editor.
func editTask(t *EditTask) (localedit.Result, error) {
	rules, refusal, err := taskRules(t)
	if err != nil {
		return localedit.Result{}, err
	}
	if refusal != "" {
		return localedit.Result{
			Outcome:  localedit.NoChange,
			Code:     localedit.CodeCannotHonour,
			Reason:   "no change proposed: " + refusal,
			Segments: append([]string{}, t.Segments...),
			Edits:    []localedit.Change{},
		}, nil
	}
	return localedit.Edit(localedit.Request{Segments: t.Segments, Lang: localedit.Lang(t.Lang), Rules: rules})
}

// taskRules decides what a task may do: the rules to run, or (refusal)
// why the engine cannot honour it. Rules are those CanHonour finds in the
// personalization and instruction, restricted to the editing preset's and
// to t.Rules; when none is left, only Keep runs (an honest no_change).
func taskRules(t *EditTask) (rules []localedit.RuleID, refusal string, err error) {
	only, err := localedit.ParseRules(t.Rules)
	if err != nil {
		return nil, "", err
	}
	v := localedit.CanHonour(localedit.Personalization(t.Personalization), t.Instruction)
	if !v.OK {
		return nil, v.Reason, nil
	}
	rules = v.Rules
	if p := t.Preset; p != nil && localedit.Personalization(t.Personalization) == localedit.EditingPreset {
		var unknown []string
		for _, id := range p.Rules {
			if _, ok := localedit.LookupRule(localedit.RuleID(id)); !ok {
				if id == "" {
					id = "(a rule without an id)"
				}
				unknown = append(unknown, id)
			}
		}
		switch {
		case len(p.Rules) == 0:
			return nil, fmt.Sprintf("the editing preset «%s» has no rules, and the local engine can only apply its own editing rules; configure a model provider for this preset", p.Name), nil
		case len(unknown) > 0:
			return nil, fmt.Sprintf("the editing preset «%s» has rules the local engine does not implement (%s); configure a model provider for this preset", p.Name, strings.Join(unknown, ", ")), nil
		}
		rules = intersect(rules, p.Rules)
	}
	if len(only) > 0 {
		ids := make([]string, len(only))
		for i, r := range only {
			ids[i] = string(r)
		}
		rules = intersect(rules, ids)
	}
	if len(rules) == 0 {
		rules = []localedit.RuleID{localedit.Keep} // nothing to run: an honest no_change
	}
	return rules, "", nil
}

// intersect keeps the rules of rs whose id is in ids, in rs's order.
func intersect(rs []localedit.RuleID, ids []string) []localedit.RuleID {
	var out []localedit.RuleID
	for _, r := range rs {
		for _, id := range ids {
			if string(r) == id {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// taskText is the text a task reads, for its usage.
func taskText(t *EditTask) []string {
	if t.Scope == nil {
		return t.Segments
	}
	var out []string
	for i, b := range t.Scope.Blocks {
		if b.Type.IsText() || (t.Scope.Kind == EditSelection && i == 0) {
			out = append(out, flowdoc.PlainText(b.RichText))
		}
	}
	return out
}

// SplitWords splits s into pieces that each end after a space (the last
// piece may not), so joining them gives s back.
func SplitWords(s string) []string {
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

// PieceStream streams a ready answer piece by piece, honouring
// cancellation; usage and the finish reason are known once it has ended.
// The local provider and test doubles use it.
type PieceStream struct {
	ctx      context.Context
	provider string
	pieces   []string
	finish   string
	usage    Usage
	ended    bool
	closed   bool
}

// NewPieceStream returns a stream of pieces for provider, ending with
// finish and reporting usage (Total is computed).
func NewPieceStream(ctx context.Context, provider string, pieces []string, finish string, usage Usage) *PieceStream {
	return &PieceStream{ctx: ctx, provider: provider, pieces: pieces, finish: finish, usage: usage}
}

// Next returns the next piece, io.EOF at the end.
func (s *PieceStream) Next() (string, error) {
	if err := s.ctx.Err(); err != nil {
		return "", ctxError(s.provider, err)
	}
	if s.closed {
		return "", &Error{Code: CodeStreamCut, Provider: s.provider, Msg: "stream closed"}
	}
	if len(s.pieces) == 0 {
		s.ended = true
		return "", io.EOF
	}
	p := s.pieces[0]
	s.pieces = s.pieces[1:]
	return p, nil
}

// Usage reports the usage once the stream has ended.
func (s *PieceStream) Usage() (Usage, bool) {
	if !s.ended {
		return Usage{}, false
	}
	u := s.usage
	u.Total = u.Input + u.Output
	return u, true
}

// FinishReason is the finish reason once the stream has ended.
func (s *PieceStream) FinishReason() string {
	if !s.ended {
		return ""
	}
	return s.finish
}

// Close ends the stream; it is safe to call twice.
func (s *PieceStream) Close() error { s.closed = true; return nil }

// LocalHonours tells whether the local provider can edit with the given
// personalization ("editing", "writing", "persona" or "" for none) and,
// for an editing preset, preset: the same decision a run makes (taskRules)
// before any text is read, so a selector can say beforehand which choices
// need a configured model provider. reason says why not.
func LocalHonours(personalization string, preset *EditPreset) (ok bool, reason string) {
	return LocalHonoursInstruction(personalization, "", preset)
}

// LocalHonoursInstruction is LocalHonours for a request with its
// instruction: a free instruction is honoured only when it asks for what
// the rules do (localedit.CanHonour).
func LocalHonoursInstruction(personalization, instruction string, preset *EditPreset) (ok bool, reason string) {
	_, refusal, err := taskRules(&EditTask{Personalization: personalization, Instruction: instruction, Preset: preset})
	if err != nil {
		return false, err.Error()
	}
	return refusal == "", refusal
}
