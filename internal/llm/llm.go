package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
)

// Role is who speaks a message.
type Role string

// Roles of a chat conversation.
const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
)

// Message is one turn of the conversation sent to the model.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
}

// Request is one generation request.
type Request struct {
	// Messages is the conversation, oldest first; the last one is usually the user's.
	Messages []Message
	// MaxTokens bounds the answer; 0 leaves it to the provider.
	MaxTokens int
	// Temperature is the sampling temperature; nil leaves it to the provider.
	Temperature *float64
	// JSON asks for a JSON object answer (response_format json_object where
	// the provider supports it; the prompt must still ask for JSON).
	JSON bool
	// Schema, with JSON, describes the object wanted. A provider that can
	// constrain its answer to a JSON Schema does so (OpenAI-compatible
	// servers: response_format json_schema, falling back to json_object
	// where the server refuses it); the others ignore it. The prompt must
	// still describe the answer: the schema only constrains it.
	Schema *Schema
	// Task, when not nil, is the same request in structured form for
	// providers that work on it directly rather than on a prompt: the local
	// provider edits it and answers as Local documents (see docs/ai.md).
	// Remote providers ignore it; the caller still puts the text and the
	// instruction into Messages for them.
	Task *EditTask
}

// EditTask is an editing request in structured form. It holds either
// Segments (plain texts; the local provider answers a localedit.Result) or
// a Scope (the article's blocks; the local provider answers operations, in
// the form the writing assistant asks every model for).
type EditTask struct {
	// Segments are the texts to edit: one per text block, rich-text runs
	// concatenated, each inline equation as one U+FFFC.
	Segments []string `json:"segments,omitempty"`
	// Scope is the part of an article to edit, as blocks.
	Scope *EditScope `json:"scope,omitempty"`
	// Lang is "zh", "en" or "" (detected per sentence).
	Lang string `json:"lang,omitempty"`
	// Personalization is "editing" (an editing preset), "writing" (a
	// writing preset), "persona", or "" (none).
	Personalization string `json:"personalization,omitempty"`
	// Instruction is the author's instruction.
	Instruction string `json:"instruction,omitempty"`
	// Preset, with Personalization "editing", is the editing preset: the
	// engine runs exactly its rules and cannot honour a preset whose rules
	// it does not implement. Without it an editing task runs all six rules.
	Preset *EditPreset `json:"preset,omitempty"`
	// Rules restricts the enabled rules to these ids (filler,
	// strong-verbs, active-voice, jargon, cliche, keep); empty means no
	// restriction.
	Rules []string `json:"rules,omitempty"`
}

// Scope kinds of an EditScope; they are the writing assistant's scopes.
const (
	EditSelection = "selection"
	EditBlock     = "block"
	EditSection   = "section"
	EditDocument  = "document"
)

// EditScope is the part of an article an EditTask edits.
type EditScope struct {
	// Kind is EditSelection, EditBlock, EditSection or EditDocument.
	Kind string `json:"kind"`
	// Blocks are the blocks in scope as the article has them: the
	// selection's or the block's one, the section's consecutive top-level
	// blocks, or the whole body.
	Blocks []flowdoc.Block `json:"blocks"`
	// Start and End are a selection's code points [Start, End) in the
	// plain text (flowdoc.PlainText) of Blocks[0].
	Start int `json:"start,omitempty"`
	End   int `json:"end,omitempty"`
}

// EditPreset is the editing preset an EditTask was made with.
type EditPreset struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Rules are the ids of the preset's rules in its order ("" for a rule
	// without one).
	Rules []string `json:"rules"`
}

// Schema is a named JSON Schema for a structured answer.
type Schema struct {
	// Name identifies the schema to the server: 1-64 of a-z A-Z 0-9 _ -.
	Name string
	// Schema is the JSON Schema object.
	Schema json.RawMessage
	// Strict asks the server to follow the schema exactly (OpenAI's strict
	// mode, which needs every property required and no extra properties).
	Strict bool
}

// Response formats a stream may report (FormatReporter): how a JSON
// answer was asked for.
const (
	FormatJSONSchema = "json_schema" // constrained to the request's schema
	FormatJSONObject = "json_object" // constrained to some JSON object
	FormatPrompt     = "prompt"      // asked for in the prompt only
)

// FormatReporter is implemented by streams that can say how a JSON answer
// was requested (one of the Format constants), after a fallback too.
type FormatReporter interface {
	ResponseFormat() string
}

// Usage is the token usage of one request.
type Usage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	Total  int64 `json:"total"`
}

// Provider generates text. Implementations are safe for concurrent use.
type Provider interface {
	// Name is the provider kind: "openai" or "local" ("echo" for the
	// llmtest double).
	Name() string
	// Model is the model the provider asks for.
	Model() string
	// Stream starts a generation. It returns an *Error when the request
	// cannot start (unreachable, unauthorized, rate_limited, bad_request,
	// server_error, timeout). Cancelling ctx ends the stream; the caller
	// must Close the returned Stream.
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Stream is one generation in progress. It is used by one goroutine.
type Stream interface {
	// Next returns the next piece of answer text. It returns io.EOF when the
	// answer is complete, or an *Error (stream_cut, timeout, server_error,
	// rate_limited) when the stream failed midway.
	Next() (string, error)
	// Usage returns the usage the provider reported; ok is false when it
	// reported none (the caller then charges its reservation). It is valid
	// after Next returned an error.
	Usage() (u Usage, ok bool)
	// FinishReason is the provider's finish reason ("stop", "length", …),
	// empty when none was sent.
	FinishReason() string
	// Close releases the stream's connection. It is safe to call twice.
	Close() error
}

// Code is a stable, append-only error code.
type Code string

// Error codes reported by providers.
const (
	CodeUnreachable  Code = "unreachable"
	CodeUnauthorized Code = "unauthorized"
	CodeRateLimited  Code = "rate_limited"
	CodeBadRequest   Code = "bad_request"
	CodeServerError  Code = "server_error"
	CodeStreamCut    Code = "stream_cut"
	CodeTimeout      Code = "timeout"
)

// Error is a classified provider failure.
type Error struct {
	Code     Code
	Provider string
	// Status is the HTTP status, 0 when there was none.
	Status int
	// RetryAfter is the provider's Retry-After, 0 when it sent none.
	RetryAfter time.Duration
	// Msg is the provider's own message, redacted of nothing secret (it never
	// holds the prompt or the key).
	Msg string
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm: %s: %s", e.Provider, e.Code)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the same request may succeed later.
func (e *Error) Retryable() bool {
	switch e.Code {
	case CodeUnreachable, CodeRateLimited, CodeServerError, CodeStreamCut, CodeTimeout:
		return true
	}
	return false
}

// ErrKind classifies a provider failure for the caller: a rate limit is
// errs.RateLimited; everything else makes the model unavailable (for now,
// or until the configuration is fixed: see Retryable).
func (e *Error) ErrKind() errs.Kind {
	if e.Code == CodeRateLimited {
		return errs.RateLimited
	}
	return errs.Unavailable
}

// ErrRetryAfter is the provider's Retry-After.
func (e *Error) ErrRetryAfter() time.Duration { return e.RetryAfter }

// CodeOf returns the Code of err when it is (or wraps) an *Error, else "".
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Result is a collected generation.
type Result struct {
	Text         string
	Usage        Usage
	UsageKnown   bool
	FinishReason string
}

// Collect runs req on p to the end, calling onText (when not nil) with each
// piece as it arrives. On error the partial result is returned with it.
func Collect(ctx context.Context, p Provider, req Request, onText func(string)) (Result, error) {
	s, err := p.Stream(ctx, req)
	if err != nil {
		return Result{}, err
	}
	defer s.Close()
	var b strings.Builder
	var res Result
	for {
		piece, err := s.Next()
		if piece != "" {
			b.WriteString(piece)
			if onText != nil {
				onText(piece)
			}
		}
		if err != nil {
			res.Text = b.String()
			res.Usage, res.UsageKnown = s.Usage()
			res.FinishReason = s.FinishReason()
			if errors.Is(err, io.EOF) {
				return res, nil
			}
			return res, err
		}
	}
}

// CountTokens estimates the tokens of s (see the package documentation):
// one per CJK ideograph, kana or Hangul syllable; ceil(n/4) for every other
// word of n runes; whitespace is free.
func CountTokens(s string) int64 {
	var n int64
	word := 0
	flush := func() {
		n += int64((word + 3) / 4)
		word = 0
	}
	for _, r := range s {
		switch {
		case isCJK(r):
			flush()
			n++
		case unicode.IsSpace(r):
			flush()
		default:
			word++
		}
	}
	flush()
	return n
}

// MessageOverhead is the per-message token framing added to input counts.
const MessageOverhead = 3

// CountInput estimates the input tokens of a request's messages.
func CountInput(msgs []Message) int64 {
	var n int64
	for _, m := range msgs {
		n += CountTokens(m.Content) + MessageOverhead
	}
	return n
}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}
