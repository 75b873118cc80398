package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// OpenAIConfig configures an OpenAI-compatible provider.
type OpenAIConfig struct {
	// BaseURL is the API root that /chat/completions is appended to, e.g.
	// https://api.openai.com/v1 or http://127.0.0.1:11434/v1 (Ollama).
	BaseURL string
	// Model is the model name sent with every request.
	Model string
	// APIKey is sent as a bearer token when not empty (Ollama and llama.cpp
	// accept requests without one).
	APIKey string
	// Timeout bounds one whole request, from connecting to the last chunk;
	// 0 means 2 minutes.
	Timeout time.Duration
	// ResponseFormat constrains JSON requests with response_format:
	// {"type":"json_schema"} when the request carries a schema, else
	// {"type":"json_object"}. A server that refuses json_schema (HTTP
	// 400/422 naming the response format) is asked again with json_object,
	// and one that refuses that too without response_format; the
	// provider remembers the downgrade and logs it once (see
	// StructuredMode). Turn it off for servers that misbehave with the
	// field.
	ResponseFormat bool
	// Logger receives the warning of a response-format downgrade; nil
	// means slog.Default().
	Logger *slog.Logger
	// NoStreamUsage leaves out stream_options.include_usage, for servers that
	// reject it; usage is then unknown and reservations are charged.
	NoStreamUsage bool
	// Client is the HTTP client; nil means a client with sane dial and
	// header timeouts.
	Client *http.Client
}

// OpenAI is a Provider for OpenAI-compatible chat completions.
type OpenAI struct {
	cfg      OpenAIConfig
	endpoint string
	client   *http.Client
	// floor is the strongest response format the server accepts, as
	// learnt from refusals: 0 json_schema, 1 json_object, 2 prompt only.
	// It only grows.
	floor atomic.Int32
}

// Structured modes, strongest first.
var modes = []string{FormatJSONSchema, FormatJSONObject, FormatPrompt}

// StructuredMode is the strongest response format this provider still
// asks for (FormatJSONSchema, FormatJSONObject or FormatPrompt): where
// the server refused a stronger one, or ResponseFormat is off.
func (p *OpenAI) StructuredMode() string {
	if !p.cfg.ResponseFormat {
		return FormatPrompt
	}
	return modes[p.floor.Load()]
}

var _ Provider = (*OpenAI)(nil)

// NewOpenAI checks cfg and returns the provider.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.BaseURL == "" {
		return nil, errors.New("llm: openai provider needs a base URL")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: openai base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.Model == "" {
		return nil, errors.New("llm: openai provider needs a model name")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	c := cfg.Client
	if c == nil {
		tr := &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		}
		c = &http.Client{Transport: tr}
	}
	return &OpenAI{cfg: cfg, endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions", client: c}, nil
}

// Name returns "openai".
func (p *OpenAI) Name() string { return "openai" }

// Model returns the configured model.
func (p *OpenAI) Model() string { return p.cfg.Model }

type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	Stream         bool            `json:"stream"`
	StreamOptions  *streamOptions  `json:"stream_options,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	Temperature    *float64        `json:"temperature,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type responseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict,omitempty"`
}

// chunk is one chat.completion.chunk, or an error object.
type chunk struct {
	Choices []struct {
		Delta struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
		TotalTokens      int64 `json:"total_tokens"`
	} `json:"usage"`
	Error *apiError `json:"error"`
}

type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

// Stream sends req and returns the answer stream. A JSON request whose
// response format the server refuses is sent again with the next weaker
// one (see OpenAIConfig.ResponseFormat).
func (p *OpenAI) Stream(ctx context.Context, req Request) (Stream, error) {
	mode := FormatPrompt
	if req.JSON && p.cfg.ResponseFormat {
		mode = modes[p.floor.Load()]
		if mode == FormatJSONSchema && req.Schema == nil {
			mode = FormatJSONObject
		}
	}
	for {
		s, err := p.stream(ctx, req, mode)
		if err == nil || mode == FormatPrompt || !formatRefused(err) {
			return s, err
		}
		next := int32(slices.Index(modes, mode) + 1)
		if p.raiseFloor(next) {
			log := p.cfg.Logger
			if log == nil {
				log = slog.Default()
			}
			log.Warn("llm: the server refused a response format; asking with a weaker one from now on",
				"provider", "openai", "model", p.cfg.Model, "refused", mode, "now", modes[next], "err", err)
		}
		mode = modes[next]
	}
}

// raiseFloor makes the floor at least n; it reports whether this call
// raised it (so that a downgrade is logged once).
func (p *OpenAI) raiseFloor(n int32) bool {
	for {
		cur := p.floor.Load()
		if cur >= n {
			return false
		}
		if p.floor.CompareAndSwap(cur, n) {
			return true
		}
	}
}

// formatRefused reports whether err is the server refusing the request's
// response_format: HTTP 400 or 422 whose message names it.
func formatRefused(err error) bool {
	var e *Error
	if !errors.As(err, &e) || (e.Status != http.StatusBadRequest && e.Status != http.StatusUnprocessableEntity) {
		return false
	}
	m := strings.ToLower(e.Msg)
	return strings.Contains(m, "response_format") || strings.Contains(m, "json_schema") ||
		strings.Contains(m, "schema") || strings.Contains(m, "json_object")
}

func (p *OpenAI) stream(ctx context.Context, req Request, mode string) (Stream, error) {
	body := chatRequest{
		Model:       p.cfg.Model,
		Messages:    req.Messages,
		Stream:      true,
		MaxTokens:   req.MaxTokens,
		Temperature: req.Temperature,
	}
	if !p.cfg.NoStreamUsage {
		body.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	switch mode {
	case FormatJSONSchema:
		body.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{
			Name: req.Schema.Name, Schema: req.Schema.Schema, Strict: req.Schema.Strict}}
	case FormatJSONObject:
		body.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	if !req.JSON {
		mode = ""
	}
	buf, err := json.Marshal(body)
	if err != nil {
		return nil, &Error{Code: CodeBadRequest, Provider: "openai", Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, bytes.NewReader(buf))
	if err != nil {
		cancel()
		return nil, &Error{Code: CodeBadRequest, Provider: "openai", Err: err}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	if p.cfg.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	resp, err := p.client.Do(hr)
	if err != nil {
		cancel()
		return nil, transportError(ctx, err, CodeUnreachable)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		return nil, statusError(resp)
	}
	return &openaiStream{ctx: ctx, cancel: cancel, body: resp.Body, dec: NewDecoder(resp.Body), format: mode}, nil
}

// transportError classifies a failure of the HTTP exchange itself.
func transportError(ctx context.Context, err error, otherwise Code) *Error {
	var ne net.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return &Error{Code: CodeTimeout, Provider: "openai", Err: stripURL(err)}
	}
	return &Error{Code: otherwise, Provider: "openai", Err: stripURL(err)}
}

// stripURL drops the *url.Error wrapper whose text repeats the endpoint and
// method; the caller names the provider itself.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// statusError turns a non-200 answer into an *Error.
func statusError(resp *http.Response) *Error {
	e := &Error{Provider: "openai", Status: resp.StatusCode}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		e.Code = CodeUnauthorized
	case resp.StatusCode == http.StatusTooManyRequests:
		e.Code = CodeRateLimited
		e.RetryAfter = ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusGatewayTimeout:
		e.Code = CodeTimeout
	case resp.StatusCode >= 500:
		e.Code = CodeServerError
		e.RetryAfter = ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	default:
		e.Code = CodeBadRequest
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
	var wrapped struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(raw, &wrapped) == nil && wrapped.Error != nil && wrapped.Error.Message != "" {
		e.Msg = oneLine(wrapped.Error.Message)
	} else if s := strings.TrimSpace(string(raw)); s != "" && !strings.HasPrefix(s, "<") {
		e.Msg = oneLine(s)
	}
	return e
}

// ParseRetryAfter reads a Retry-After header: delay seconds or an HTTP date.
// It returns 0 when the header is empty or unreadable.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// openaiStream decodes chat.completion.chunk events.
type openaiStream struct {
	ctx    context.Context
	cancel context.CancelFunc
	body   io.ReadCloser
	dec    *Decoder

	pending  []string // text decoded but not yet returned
	usage    Usage
	hasUsage bool
	finish   string
	err      error  // terminal error, returned once pending text is drained
	format   string // how a JSON answer was asked for; "" for text requests
}

var _ FormatReporter = (*openaiStream)(nil)

// ResponseFormat says how a JSON answer was asked for ("" for text).
func (s *openaiStream) ResponseFormat() string { return s.format }

func (s *openaiStream) Usage() (Usage, bool) { return s.usage, s.hasUsage }
func (s *openaiStream) FinishReason() string { return s.finish }

func (s *openaiStream) Close() error {
	s.cancel()
	return s.body.Close()
}

func (s *openaiStream) Next() (string, error) {
	for {
		if len(s.pending) > 0 {
			t := s.pending[0]
			s.pending = s.pending[1:]
			return t, nil
		}
		if s.err != nil {
			return "", s.err
		}
		s.step()
	}
}

// step decodes one event into pending text, usage or a terminal error.
func (s *openaiStream) step() {
	ev, err := s.dec.Next()
	if err != nil {
		switch {
		case errors.Is(err, io.EOF) && s.finish != "":
			// Some servers close after the finish chunk without [DONE].
			s.err = io.EOF
		case errors.Is(err, io.EOF):
			s.err = &Error{Code: CodeStreamCut, Provider: "openai", Msg: "the stream ended before the answer was complete"}
		case errors.Is(err, ErrLineTooLong):
			s.err = &Error{Code: CodeServerError, Provider: "openai", Err: err}
		default:
			te := transportError(s.ctx, err, CodeStreamCut)
			s.err = te
		}
		return
	}
	data := strings.TrimSpace(ev.Data)
	if data == "[DONE]" {
		s.err = io.EOF
		return
	}
	var c chunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		s.err = &Error{Code: CodeServerError, Provider: "openai", Msg: "undecodable stream chunk", Err: err}
		return
	}
	if c.Error != nil {
		s.err = midStreamError(c.Error)
		return
	}
	for _, ch := range c.Choices {
		if ch.Delta.Content != nil && *ch.Delta.Content != "" {
			s.pending = append(s.pending, *ch.Delta.Content)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finish = *ch.FinishReason
		}
	}
	if c.Usage != nil {
		s.usage = Usage{Input: c.Usage.PromptTokens, Output: c.Usage.CompletionTokens, Total: c.Usage.TotalTokens}
		if s.usage.Total == 0 {
			s.usage.Total = s.usage.Input + s.usage.Output
		}
		s.hasUsage = true
	}
}

// midStreamError classifies an {"error":…} object sent inside the stream.
func midStreamError(a *apiError) *Error {
	e := &Error{Code: CodeServerError, Provider: "openai", Msg: oneLine(a.Message)}
	code := strings.ToLower(fmt.Sprint(a.Type, " ", a.Code))
	switch {
	case strings.Contains(code, "rate_limit") || strings.Contains(code, "429"):
		e.Code = CodeRateLimited
	case strings.Contains(code, "invalid_request") || strings.Contains(code, "400"):
		e.Code = CodeBadRequest
	case strings.Contains(code, "auth") || strings.Contains(code, "401"):
		e.Code = CodeUnauthorized
	}
	return e
}
