package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/foliodev/folio/internal/llm"
)

// Scenario selects how the server answers.
type Scenario string

// Scenarios.
const (
	// OK streams the reply with usage and [DONE].
	OK Scenario = "ok"
	// CRLF is OK with CRLF line endings and "data:" without a space.
	CRLF Scenario = "crlf"
	// NoUsage streams the reply and [DONE] but never a usage chunk (servers
	// that ignore stream_options).
	NoUsage Scenario = "no_usage"
	// Unauthorized answers HTTP 401 with an OpenAI-style error body.
	Unauthorized Scenario = "unauthorized"
	// RateLimited answers HTTP 429 with Retry-After: 7.
	RateLimited Scenario = "rate_limited"
	// ServerError answers HTTP 503.
	ServerError Scenario = "server_error"
	// ErrorMidStream sends the first content deltas, then {"error":…}.
	ErrorMidStream Scenario = "error_mid_stream"
	// CutBeforeUsage sends the reply and the finish chunk, then closes the
	// connection before usage and [DONE].
	CutBeforeUsage Scenario = "cut_before_usage"
	// CutMidStream closes the connection after the first content delta.
	CutMidStream Scenario = "cut_mid_stream"
)

// Reply is the default answer text.
const Reply = "Hello from the fake model, streamed in pieces."

// Request is what the server received (for assertions).
type Request struct {
	Authorization string
	Body          map[string]any
}

// Server is a running fake. Set Scenario and Reply before or between requests.
type Server struct {
	*httptest.Server

	mu       sync.Mutex // guards the fields below
	scenario Scenario
	reply    string
	replies  []string // answered in turn before reply (SetReplies)
	refused  map[string]bool
	model    string
	requests []Request
}

// SetReplies makes the next requests answer rs[0], rs[1], … in turn; after
// them the server answers its Reply again.
func (f *Server) SetReplies(rs ...string) {
	f.mu.Lock()
	f.replies = append([]string(nil), rs...)
	f.mu.Unlock()
}

// RefuseFormats makes the server answer HTTP 400 with an OpenAI-style
// invalid_request_error naming response_format to requests whose
// response_format.type is one of types ("json_schema", "json_object"), as
// servers without structured output do.
func (f *Server) RefuseFormats(types ...string) {
	f.mu.Lock()
	f.refused = map[string]bool{}
	for _, t := range types {
		f.refused[t] = true
	}
	f.mu.Unlock()
}

// NewServer starts a fake answering with scenario s. Close it when done.
func NewServer(s Scenario) *Server {
	f := &Server{scenario: s, reply: Reply, model: "fake-model"}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// BaseURL is the API root to configure: <server>/v1.
func (f *Server) BaseURL() string { return f.URL + "/v1" }

// SetScenario changes how later requests are answered.
func (f *Server) SetScenario(s Scenario) { f.mu.Lock(); f.scenario = s; f.mu.Unlock() }

// Requests returns the requests received so far.
func (f *Server) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// Pieces splits a reply into the content deltas the server sends: words with
// their trailing space.
func Pieces(reply string) []string {
	var out []string
	for reply != "" {
		i := strings.IndexByte(reply, ' ')
		if i < 0 {
			out = append(out, reply)
			break
		}
		out = append(out, reply[:i+1])
		reply = reply[i+1:]
	}
	return out
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	format := ""
	if rf, ok := body["response_format"].(map[string]any); ok {
		format, _ = rf["type"].(string)
	}

	f.mu.Lock()
	f.requests = append(f.requests, Request{Authorization: r.Header.Get("Authorization"), Body: body})
	sc, reply, model := f.scenario, f.reply, f.model
	refused := f.refused[format]
	if !refused && len(f.replies) > 0 && sc != Unauthorized && sc != RateLimited && sc != ServerError {
		reply, f.replies = f.replies[0], f.replies[1:]
	}
	f.mu.Unlock()

	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	if refused {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"Invalid parameter: 'response_format' of type '`+format+`' is not supported with this model.","type":"invalid_request_error","param":"response_format","code":null}}`)
		return
	}
	switch sc {
	case Unauthorized:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: sk-te****","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
		return
	case RateLimited:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
		return
	case ServerError:
		http.Error(w, `{"error":{"message":"The server is overloaded","type":"server_error"}}`, http.StatusServiceUnavailable)
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	eol, sep := "\n", "data: "
	if sc == CRLF {
		eol, sep = "\r\n", "data:"
	}
	send := func(s string) {
		io.WriteString(w, s)
		if fl != nil {
			fl.Flush()
		}
	}
	event := func(v any) {
		b, _ := json.Marshal(v)
		send(sep + string(b) + eol + eol)
	}
	base := func(choices []any, usage any) map[string]any {
		return map[string]any{
			"id": "chatcmpl-fake1", "object": "chat.completion.chunk", "created": 1767225600,
			"model": model, "system_fingerprint": "fp_fake", "choices": choices, "usage": usage,
		}
	}
	choice := func(delta map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}
	}

	send(": keep-alive" + eol + eol)
	event(base(choice(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil), nil))
	pieces := Pieces(reply)
	for i, p := range pieces {
		event(base(choice(map[string]any{"content": p}, nil), nil))
		if i == 0 {
			switch sc {
			case CutMidStream:
				panic(http.ErrAbortHandler) // the connection drops: no terminating chunk
			case ErrorMidStream:
				event(map[string]any{"error": map[string]any{"message": "The model produced invalid content.", "type": "server_error", "code": nil}})
				return
			}
			send(":" + eol) // a bare comment between chunks
		}
	}
	event(base(choice(map[string]any{}, "stop"), nil))
	if sc == CutBeforeUsage {
		panic(http.ErrAbortHandler)
	}
	if sc != NoUsage {
		var msgs []llm.Message
		if b, err := json.Marshal(body["messages"]); err == nil {
			_ = json.Unmarshal(b, &msgs)
		}
		in, out := llm.CountInput(msgs), llm.CountTokens(reply)
		event(base([]any{}, map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}))
	}
	send(sep + "[DONE]" + eol + eol)
}
