package assistant

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
)

// Error codes of the gateway (the quota codes pass through unchanged).
const (
	CodeUnreachable   = "provider_unreachable"
	CodeUnauthorized  = "provider_unauthorized"
	CodeRateLimited   = "provider_rate_limited"
	CodeBadRequest    = "provider_bad_request"
	CodeProviderError = "provider_error"
	CodeStreamCut     = "provider_stream_cut"
	CodeTimeout       = "provider_timeout"
	CodeNotJSON       = "output_not_json"
	CodeInvalid       = "output_invalid"
	CodeCancelled     = "cancelled"
	CodeNotConfigured = "ai_not_configured"
)

// Error is a gateway failure with a stable code.
type Error struct {
	Code     string
	Category quota.Category
	// Provider is the provider kind ("openai", "local"), "" when the call
	// never reached one.
	Provider string
	// RetryAfter is when a retry may succeed; 0 when unknown.
	RetryAfter time.Duration
	retryable  bool
	Err        error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("assistant: %s %s", e.Category, e.Code)
	if e.Provider != "" {
		s += " (provider " + e.Provider + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the same call may succeed later: provider
// outages, rate and concurrency limits yes; bad credentials, bad requests,
// exhausted budgets, invalid output and cancellation no.
func (e *Error) Retryable() bool { return e.retryable }

// ErrRetryAfter is when a retry may succeed, 0 when unknown.
func (e *Error) ErrRetryAfter() time.Duration { return e.RetryAfter }

// CodeOf returns err's gateway code, "" when err is not an *Error.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Trace ties a call to the work it belongs to.
type Trace struct {
	RunID   string
	TaskID  string
	Attempt int
}

// Route is one category's provider and policy.
type Route struct {
	Provider llm.Provider
	Policy   *quota.Policy
	// Source is "dedicated", "compat", "mixed" or "default" (see package
	// config).
	Source string
	// MaxOutputTokens is the answer budget when a request sets none; 0
	// leaves it to the provider and reserves DefaultReserve.
	MaxOutputTokens int
	// Settings are the resolved settings, for status and error hints.
	Settings config.Resolved
}

// DefaultReserve is the answer budget reserved when none is configured.
const DefaultReserve = 1024

// Gateway routes generation requests. It is safe for concurrent use.
type Gateway struct {
	routes map[quota.Category]Route
	ledger *quota.Ledger
	now    func() time.Time
}

// New returns a gateway over routes, booking usage in ledger. now is the
// clock (nil for time.Now).
func New(routes map[quota.Category]Route, ledger *quota.Ledger, now func() time.Time) *Gateway {
	if now == nil {
		now = time.Now
	}
	return &Gateway{routes: routes, ledger: ledger, now: now}
}

// Open builds the gateway from the configuration: one provider and one
// policy per category, counters in db, usage in ledger.
func Open(cfg *config.Config, db *kv.DB, ledger *quota.Ledger, now func() time.Time) (*Gateway, error) {
	routes := map[quota.Category]Route{}
	for _, c := range quota.Categories {
		r, err := cfg.AICategory(string(c))
		if err != nil {
			return nil, err
		}
		p, err := NewProvider(r)
		if err != nil {
			return nil, fmt.Errorf("assistant: %s provider: %w", c, err)
		}
		routes[c] = Route{
			Provider:        p,
			Policy:          quota.NewPolicy(db, c, quota.LimitsFrom(r.AISettings), now),
			Source:          string(r.Source),
			MaxOutputTokens: r.MaxOutputTokens,
			Settings:        r,
		}
	}
	return New(routes, ledger, now), nil
}

// NewProvider makes the provider a resolved category asks for.
func NewProvider(r config.Resolved) (llm.Provider, error) {
	switch r.Provider {
	case "local":
		return llm.NewLocal(r.Model), nil
	case "openai":
		return llm.NewOpenAI(llm.OpenAIConfig{
			BaseURL:        r.BaseURL,
			Model:          r.Model,
			APIKey:         string(r.APIKey),
			Timeout:        r.Timeout,
			ResponseFormat: r.ResponseFormat,
			NoStreamUsage:  !r.StreamUsage,
		})
	}
	return nil, fmt.Errorf("unknown provider %q", r.Provider)
}

// Route returns category c's route.
func (g *Gateway) Route(c quota.Category) (Route, bool) {
	r, ok := g.routes[c]
	return r, ok
}

// Sources maps each category to its settings source, for status output.
func (g *Gateway) Sources() map[quota.Category]string {
	m := map[quota.Category]string{}
	for c, r := range g.routes {
		m[c] = r.Source
	}
	return m
}

// Request is a generation request.
type Request struct {
	Category quota.Category
	// User is who the call is for, for per-user concurrency; it is never
	// stored with usage.
	User     string
	Messages []llm.Message
	// MaxTokens bounds the answer; 0 uses the category's max_output_tokens.
	MaxTokens   int
	Temperature *float64
	Trace       Trace
	// OnText receives answer pieces as they stream (the repair attempt's
	// too). It must not block for long.
	OnText func(string)
	// DeferBooking returns successful calls' usage events in Result.Events
	// instead of booking them; the caller books them with
	// quota.Ledger.BookInBatch in the batch that records its result.
	DeferBooking bool
	// Schema describes the object Structured asks for; providers that
	// can constrain their answer to it do (see llm.Request.Schema).
	Schema *llm.Schema
	// Task is the request in structured form, for providers that work on
	// it rather than on the messages (the local provider); the others
	// ignore it (see llm.Request.Task).
	Task *llm.EditTask
}

// Result is a finished generation.
type Result struct {
	Text         string
	FinishReason string
	// Usage sums every model call of the request.
	Usage      llm.Usage
	UsageKnown bool
	Provider   string
	Model      string
	Source     string
	// ResponseFormat is how the last call asked for JSON (llm.Format*),
	// "" for text.
	ResponseFormat string
	Latency        time.Duration
	// Events are the usage events of the calls; Booked says whether the
	// gateway booked them (false with DeferBooking).
	Events []quota.Event
	Booked bool
}

// StructuredResult is a finished structured generation.
type StructuredResult struct {
	Result
	// JSON is the extracted, validated object.
	JSON json.RawMessage
	// Repaired is true when the object came from the repair attempt.
	Repaired bool
}

// Text generates free text.
func (g *Gateway) Text(ctx context.Context, req Request) (*Result, error) {
	res := &Result{}
	start := g.now()
	text, err := g.call(ctx, req, false, 0, res)
	res.Text = text
	res.Latency = g.now().Sub(start)
	if err != nil {
		g.bookFailed(res)
		return res, err
	}
	g.book(req, res)
	return res, nil
}

// Structured generates one JSON object and validates it with validate
// (nil for none). See the package documentation for extraction and repair.
func (g *Gateway) Structured(ctx context.Context, req Request, validate func(json.RawMessage) error) (*StructuredResult, error) {
	out := &StructuredResult{}
	res := &out.Result
	start := g.now()
	fail := func(err error) (*StructuredResult, error) {
		res.Latency = g.now().Sub(start)
		g.bookFailed(res)
		return out, err
	}
	text, err := g.call(ctx, req, true, 0, res)
	res.Text = text
	if err != nil {
		return fail(err)
	}
	obj, perr := ExtractJSON(text)
	if perr != nil {
		repair := req
		repair.Messages = append(append([]llm.Message(nil), req.Messages...),
			llm.Message{Role: llm.Assistant, Content: clip(text, 8000)},
			llm.Message{Role: llm.User, Content: repairPrompt(perr, res.FinishReason)})
		text, err = g.call(ctx, repair, true, 1, res)
		res.Text = text
		if err != nil {
			return fail(err)
		}
		if obj, perr = ExtractJSON(text); perr != nil {
			return fail(&Error{Code: CodeNotJSON, Category: req.Category, Provider: res.Provider, Err: perr})
		}
		out.Repaired = true
	}
	if validate != nil {
		if err := validate(obj); err != nil {
			return fail(&Error{Code: CodeInvalid, Category: req.Category, Provider: res.Provider, Err: err})
		}
	}
	out.JSON = obj
	res.Latency = g.now().Sub(start)
	g.book(req, res)
	return out, nil
}

func repairPrompt(perr error, finish string) string {
	var b strings.Builder
	b.WriteString("Your previous answer could not be used: ")
	b.WriteString(strings.TrimPrefix(perr.Error(), "assistant: "))
	b.WriteString(".")
	if finish == "length" {
		b.WriteString(" It was cut off by the length limit; answer more briefly.")
	}
	b.WriteString(" Answer again with exactly one valid JSON object and nothing else: no prose, no code fences.")
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// call runs one model call (call number n of the request) through the
// category's policy and returns its text (partial on error); usage and the
// event are added to res.
func (g *Gateway) call(ctx context.Context, req Request, asJSON bool, n int, res *Result) (string, error) {
	rt, ok := g.routes[req.Category]
	if !ok || rt.Provider == nil || rt.Policy == nil {
		return "", &Error{Code: CodeNotConfigured, Category: req.Category, Err: fmt.Errorf("no provider configured for category %q", req.Category)}
	}
	res.Provider, res.Model, res.Source = rt.Provider.Name(), rt.Provider.Model(), rt.Source
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = rt.MaxOutputTokens
	}
	reserve := int64(maxTokens)
	if reserve <= 0 {
		reserve = DefaultReserve
	}
	input := llm.CountInput(req.Messages)
	lease, err := rt.Policy.Acquire(ctx, req.User, input+reserve)
	if err != nil {
		return "", g.mapErr(req.Category, rt.Provider.Name(), err)
	}
	lreq := llm.Request{Messages: req.Messages, MaxTokens: maxTokens, Temperature: req.Temperature, JSON: asJSON, Task: req.Task}
	if asJSON {
		lreq.Schema = req.Schema
	}
	s, err := rt.Provider.Stream(ctx, lreq)
	if err != nil {
		lease.Release() // the model never answered: nothing to charge
		return "", g.mapErr(req.Category, rt.Provider.Name(), err)
	}
	defer s.Close()
	res.ResponseFormat = ""
	if asJSON {
		res.ResponseFormat = llm.FormatPrompt
		if fr, ok := s.(llm.FormatReporter); ok && fr.ResponseFormat() != "" {
			res.ResponseFormat = fr.ResponseFormat()
		}
	}
	var text strings.Builder
	var streamErr error
	for {
		piece, err := s.Next()
		if piece != "" {
			text.WriteString(piece)
			if req.OnText != nil {
				req.OnText(piece)
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				streamErr = err
			}
			break
		}
	}
	res.FinishReason = s.FinishReason()
	u, known := s.Usage()
	ev := quota.Event{
		ID: g.eventID(req, n), Category: req.Category, Provider: rt.Provider.Name(), Model: rt.Provider.Model(),
		Time: g.now(),
	}
	if known {
		if u.Total == 0 {
			u.Total = u.Input + u.Output
		}
		ev.Input, ev.Output, ev.Total = u.Input, u.Output, u.Total
		_ = lease.Settle(u.Total)
	} else {
		// No usage reported (a cut stream, a server ignoring
		// include_usage): charge the reservation and say so.
		ev.Input, ev.Output, ev.Total, ev.Estimated = input, reserve, input+reserve, true
		_ = lease.SettleReservation()
	}
	res.Usage.Input += ev.Input
	res.Usage.Output += ev.Output
	res.Usage.Total += ev.Total
	res.UsageKnown = known && (n == 0 || res.UsageKnown)
	res.Events = append(res.Events, ev)
	if streamErr != nil {
		return text.String(), g.mapErr(req.Category, rt.Provider.Name(), streamErr)
	}
	return text.String(), nil
}

// book books a successful request's events unless the caller defers.
func (g *Gateway) book(req Request, res *Result) {
	if req.DeferBooking {
		return
	}
	g.bookFailed(res)
}

// bookFailed books res's events with BookSafe.
func (g *Gateway) bookFailed(res *Result) {
	if g.ledger == nil || len(res.Events) == 0 {
		return
	}
	booked := true
	for _, ev := range res.Events {
		booked = g.ledger.BookSafe(ev) && booked
	}
	res.Booked = booked
}

// eventID is stable for a traced call (the same run, task, attempt and call
// number give the same id) and random otherwise.
func (g *Gateway) eventID(req Request, n int) string {
	t := req.Trace
	if t.RunID == "" && t.TaskID == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		return "u-" + hex.EncodeToString(b[:])
	}
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00%d\x00%d", req.Category, t.RunID, t.TaskID, t.Attempt, n)))
	return "t-" + hex.EncodeToString(h[:12])
}

// mapErr turns quota, provider and context errors into *Error.
func (g *Gateway) mapErr(cat quota.Category, provider string, err error) error {
	var qe *quota.Error
	if errors.As(err, &qe) {
		return &Error{Code: qe.Code(), Category: cat, RetryAfter: qe.RetryAfter, retryable: qe.Retryable(), Err: err}
	}
	var le *llm.Error
	if errors.As(err, &le) {
		code := map[llm.Code]string{
			llm.CodeUnreachable: CodeUnreachable, llm.CodeUnauthorized: CodeUnauthorized,
			llm.CodeRateLimited: CodeRateLimited, llm.CodeBadRequest: CodeBadRequest,
			llm.CodeServerError: CodeProviderError, llm.CodeStreamCut: CodeStreamCut, llm.CodeTimeout: CodeTimeout,
		}[le.Code]
		if code == "" {
			code = CodeProviderError
		}
		if errors.Is(err, context.Canceled) {
			code = CodeCancelled
		}
		return &Error{Code: code, Category: cat, Provider: provider, RetryAfter: le.RetryAfter,
			retryable: le.Retryable() && code != CodeCancelled, Err: err}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Code: CodeCancelled, Category: cat, Provider: provider, Err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeTimeout, Category: cat, Provider: provider, retryable: true, Err: err}
	}
	return &Error{Code: CodeProviderError, Category: cat, Provider: provider, Err: err}
}
