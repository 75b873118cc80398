package llm_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/llm/llmtest"
)

func newOpenAI(t testing.TB, baseURL string, mod func(*llm.OpenAIConfig)) *llm.OpenAI {
	t.Helper()
	cfg := llm.OpenAIConfig{BaseURL: baseURL, Model: "fake-model", APIKey: "sk-test", Timeout: 5 * time.Second, ResponseFormat: true}
	if mod != nil {
		mod(&cfg)
	}
	p, err := llm.NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var hello = llm.Request{Messages: []llm.Message{{Role: llm.System, Content: "Be brief."}, {Role: llm.User, Content: "Say hello"}}, MaxTokens: 64}

// fixtureServer serves a recorded-style SSE file as the stream body.
func fixtureServer(t testing.TB, name string, abort bool) *httptest.Server {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(raw)
		if abort {
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func TestOpenAIFixtures(t *testing.T) {
	tests := []struct {
		file      string
		abort     bool
		text      string
		usage     llm.Usage
		known     bool
		finish    string
		code      llm.Code
		retryable bool
	}{
		{file: "openai.sse", text: "Bonjour 世界", usage: llm.Usage{Input: 19, Output: 3, Total: 22}, known: true, finish: "stop"},
		{file: "ollama.sse", text: "Hi there", usage: llm.Usage{Input: 26, Output: 2, Total: 28}, known: true, finish: "stop"},
		{file: "error_mid.sse", text: "Par", code: llm.CodeRateLimited, retryable: true},
		{file: "cut.sse", text: "cut", code: llm.CodeStreamCut, retryable: true},
		{file: "cut.sse", abort: true, text: "cut", code: llm.CodeStreamCut, retryable: true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s := fixtureServer(t, tt.file, tt.abort)
			res, err := llm.Collect(context.Background(), newOpenAI(t, s.URL, nil), hello, nil)
			if res.Text != tt.text {
				t.Errorf("text = %q, want %q", res.Text, tt.text)
			}
			if got := llm.CodeOf(err); got != tt.code {
				t.Fatalf("code = %q (err %v), want %q", got, err, tt.code)
			}
			if err != nil {
				var e *llm.Error
				errors.As(err, &e)
				if e.Retryable() != tt.retryable {
					t.Errorf("retryable = %v", e.Retryable())
				}
				return
			}
			if res.Usage != tt.usage || res.UsageKnown != tt.known || res.FinishReason != tt.finish {
				t.Errorf("usage %+v known %v finish %q", res.Usage, res.UsageKnown, res.FinishReason)
			}
		})
	}
}

func TestOpenAIScenarios(t *testing.T) {
	srv := llmtest.NewServer(llmtest.OK)
	defer srv.Close()
	p := newOpenAI(t, srv.BaseURL(), nil)
	in := llm.CountInput(hello.Messages)
	out := llm.CountTokens(llmtest.Reply)
	tests := []struct {
		sc         llmtest.Scenario
		text       string
		known      bool
		code       llm.Code
		status     int
		retryAfter time.Duration
	}{
		{sc: llmtest.OK, text: llmtest.Reply, known: true},
		{sc: llmtest.CRLF, text: llmtest.Reply, known: true},
		{sc: llmtest.NoUsage, text: llmtest.Reply, known: false},
		{sc: llmtest.Unauthorized, code: llm.CodeUnauthorized, status: 401},
		{sc: llmtest.RateLimited, code: llm.CodeRateLimited, status: 429, retryAfter: 7 * time.Second},
		{sc: llmtest.ServerError, code: llm.CodeServerError, status: 503},
		{sc: llmtest.ErrorMidStream, text: "Hello ", code: llm.CodeServerError},
		{sc: llmtest.CutMidStream, text: "Hello ", code: llm.CodeStreamCut},
		{sc: llmtest.CutBeforeUsage, text: llmtest.Reply, code: llm.CodeStreamCut},
	}
	for _, tt := range tests {
		t.Run(string(tt.sc), func(t *testing.T) {
			srv.SetScenario(tt.sc)
			var streamed strings.Builder
			res, err := llm.Collect(context.Background(), p, hello, func(s string) { streamed.WriteString(s) })
			if got := llm.CodeOf(err); got != tt.code {
				t.Fatalf("code = %q (err %v), want %q", got, err, tt.code)
			}
			if res.Text != tt.text || streamed.String() != tt.text {
				t.Errorf("text = %q streamed %q, want %q", res.Text, streamed.String(), tt.text)
			}
			if err != nil {
				var e *llm.Error
				errors.As(err, &e)
				if e.Status != tt.status || e.RetryAfter != tt.retryAfter {
					t.Errorf("status %d retry-after %v", e.Status, e.RetryAfter)
				}
				if strings.Contains(err.Error(), "sk-test") {
					t.Errorf("error leaks the key: %v", err)
				}
				if res.UsageKnown {
					t.Errorf("usage known after %v", err)
				}
				return
			}
			if res.UsageKnown != tt.known {
				t.Fatalf("usage known = %v", res.UsageKnown)
			}
			if tt.known && res.Usage != (llm.Usage{Input: in, Output: out, Total: in + out}) {
				t.Errorf("usage = %+v", res.Usage)
			}
		})
	}
	// What went over the wire.
	reqs := srv.Requests()
	body := reqs[0].Body
	if reqs[0].Authorization != "Bearer sk-test" || body["stream"] != true || body["model"] != "fake-model" {
		t.Errorf("request = %+v", reqs[0])
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options = %v", body["stream_options"])
	}
	if _, ok := body["response_format"]; ok {
		t.Errorf("response_format sent for a text request")
	}
}

func TestOpenAIResponseFormat(t *testing.T) {
	srv := llmtest.NewServer(llmtest.OK)
	defer srv.Close()
	req := hello
	req.JSON = true
	for _, on := range []bool{true, false} {
		p := newOpenAI(t, srv.BaseURL(), func(c *llm.OpenAIConfig) { c.ResponseFormat = on; c.NoStreamUsage = !on })
		if _, err := llm.Collect(context.Background(), p, req, nil); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		body := reqs[len(reqs)-1].Body
		rf, has := body["response_format"].(map[string]any)
		if has != on || (on && rf["type"] != "json_object") {
			t.Errorf("ResponseFormat=%v: response_format = %v", on, body["response_format"])
		}
		if _, has := body["stream_options"]; has == !on {
			t.Errorf("NoStreamUsage=%v: stream_options = %v", !on, body["stream_options"])
		}
	}
}

func TestOpenAIUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = llm.Collect(context.Background(), newOpenAI(t, "http://"+addr+"/v1", nil), hello, nil)
	if llm.CodeOf(err) != llm.CodeUnreachable {
		t.Fatalf("err = %v, want unreachable", err)
	}
}

func TestOpenAITimeout(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"slow\"}}]}\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer s.Close()
	p := newOpenAI(t, s.URL, func(c *llm.OpenAIConfig) { c.Timeout = 200 * time.Millisecond })
	res, err := llm.Collect(context.Background(), p, hello, nil)
	if llm.CodeOf(err) != llm.CodeTimeout || res.Text != "slow" {
		t.Fatalf("err = %v text %q, want timeout after \"slow\"", err, res.Text)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"": 0, "7": 7 * time.Second, "1.5": 1500 * time.Millisecond, "x": 0,
		"Thu, 01 Jan 2026 00:00:30 GMT": 30 * time.Second, "Wed, 31 Dec 2025 00:00:00 GMT": 0,
	} {
		if got := llm.ParseRetryAfter(in, now); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}

func TestNewOpenAIChecksConfig(t *testing.T) {
	for _, c := range []llm.OpenAIConfig{{Model: "m"}, {BaseURL: "localhost:11434", Model: "m"}, {BaseURL: "http://x/v1"}} {
		if _, err := llm.NewOpenAI(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

var opsSchema = &llm.Schema{Name: "ops", Schema: []byte(`{"type":"object","properties":{"ops":{"type":"array"}},"required":["ops"]}`)}

func formatOf(r llmtest.Request) string {
	rf, ok := r.Body["response_format"].(map[string]any)
	if !ok {
		return "none"
	}
	s, _ := rf["type"].(string)
	return s
}

// A JSON request with a schema asks for json_schema; a server that refuses
// it is asked again with json_object, then without response_format, and
// the provider remembers the downgrade.
func TestOpenAIStructuredOutputFallsBack(t *testing.T) {
	tests := []struct {
		refuse    []string
		formats   []string // response_format types sent, in order
		reported  string
		mode      string
		nextFirst string // the first format of the next request
	}{
		{refuse: nil, formats: []string{"json_schema"}, reported: llm.FormatJSONSchema, mode: llm.FormatJSONSchema, nextFirst: "json_schema"},
		{refuse: []string{"json_schema"}, formats: []string{"json_schema", "json_object"}, reported: llm.FormatJSONObject, mode: llm.FormatJSONObject, nextFirst: "json_object"},
		{refuse: []string{"json_schema", "json_object"}, formats: []string{"json_schema", "json_object", "none"}, reported: llm.FormatPrompt, mode: llm.FormatPrompt, nextFirst: "none"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.refuse), func(t *testing.T) {
			s := llmtest.NewServer(llmtest.OK)
			defer s.Close()
			s.RefuseFormats(tt.refuse...)
			s.SetReplies(`{"ops":[]}`)
			p := newOpenAI(t, s.BaseURL(), func(c *llm.OpenAIConfig) { c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) })
			req := hello
			req.JSON, req.Schema = true, opsSchema
			st, err := p.Stream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := st.Next(); err != nil {
					break
				}
			}
			st.Close()
			if got := st.(llm.FormatReporter).ResponseFormat(); got != tt.reported {
				t.Fatalf("reported format %q, want %q", got, tt.reported)
			}
			var sent []string
			for _, r := range s.Requests() {
				sent = append(sent, formatOf(r))
			}
			if fmt.Sprint(sent) != fmt.Sprint(tt.formats) {
				t.Fatalf("formats sent %v, want %v", sent, tt.formats)
			}
			if first := s.Requests()[0].Body["response_format"]; len(tt.refuse) == 0 {
				js := first.(map[string]any)["json_schema"].(map[string]any)
				if js["name"] != "ops" || js["schema"] == nil {
					t.Fatalf("json_schema sent as %v", first)
				}
			}
			if p.StructuredMode() != tt.mode {
				t.Fatalf("mode %q, want %q", p.StructuredMode(), tt.mode)
			}
			n := len(s.Requests())
			if _, err := llm.Collect(context.Background(), p, req, nil); err != nil {
				t.Fatal(err)
			}
			if got := formatOf(s.Requests()[n]); got != tt.nextFirst {
				t.Fatalf("the next request asked with %q, want %q", got, tt.nextFirst)
			}
		})
	}
}

// A 400 that does not name the response format is not a refusal of it.
func TestOpenAIBadRequestIsNotAFormatRefusal(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error"}}`)
	}))
	defer s.Close()
	p := newOpenAI(t, s.URL, nil)
	req := hello
	req.JSON, req.Schema = true, opsSchema
	_, err := p.Stream(context.Background(), req)
	if llm.CodeOf(err) != llm.CodeBadRequest || p.StructuredMode() != llm.FormatJSONSchema {
		t.Fatalf("err %v, mode %s", err, p.StructuredMode())
	}
}
