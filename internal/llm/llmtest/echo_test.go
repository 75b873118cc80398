package llmtest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/llm/llmtest"
)

func TestEcho(t *testing.T) {
	p := llmtest.NewEcho("")
	msgs := func(s string) []llm.Message {
		return []llm.Message{{Role: llm.System, Content: "sys"}, {Role: llm.User, Content: s}}
	}
	tests := []struct {
		name   string
		req    llm.Request
		want   string
		finish string
	}{
		{"rewrite", llm.Request{Messages: msgs("  hello   world. how are   you")}, "Hello world. How are you.", "stop"},
		{"keeps punctuation", llm.Request{Messages: msgs("ok?")}, "Ok?", "stop"},
		{"cjk", llm.Request{Messages: msgs("你好世界。")}, "你好世界。", "stop"},
		{"empty", llm.Request{Messages: msgs(" ")}, "Nothing to rewrite.", "stop"},
		{"max tokens", llm.Request{Messages: msgs("one two three four"), MaxTokens: 2}, "One two", "length"},
		{"json echo", llm.Request{Messages: msgs("Return this: {\"title\": \"A\", \"tags\": [\"x\"]} thanks"), JSON: true}, `{"title":"A","tags":["x"]}`, "stop"},
		{"json wrap", llm.Request{Messages: msgs("say \"hi\""), JSON: true}, `{"text":"Say \"hi\""}`, "stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := llm.Collect(context.Background(), p, tt.req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.want || res.FinishReason != tt.finish {
				t.Fatalf("got %q (%s), want %q (%s)", res.Text, res.FinishReason, tt.want, tt.finish)
			}
			if tt.req.JSON && !json.Valid([]byte(res.Text)) {
				t.Fatalf("invalid JSON %q", res.Text)
			}
			in, out := llm.CountInput(tt.req.Messages), llm.CountTokens(res.Text)
			if !res.UsageKnown || res.Usage != (llm.Usage{Input: in, Output: out, Total: in + out}) {
				t.Fatalf("usage %+v known %v", res.Usage, res.UsageKnown)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Stream(ctx, llm.Request{}); llm.CodeOf(err) != llm.CodeStreamCut {
		t.Fatalf("cancelled: %v", err)
	}
}
