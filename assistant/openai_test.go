package assistant

import (
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/llm/llmtest"
	"github.com/foliodev/folio/internal/quota"
)

const validOps = `{"summary":"shorter","ops":[{"op":"replace_block","blockId":"p1","block":{"type":"paragraph","richText":[{"text":"Shorter."}]}}]}`

func openAIWorld(t *testing.T, srv *llmtest.Server) *world {
	t.Helper()
	p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.BaseURL(), Model: "fake-model", Timeout: 10 * time.Second, ResponseFormat: true})
	if err != nil {
		t.Fatal(err)
	}
	return newWorld(t, func(o *worldOptions) { o.provider = p })
}

// The OpenAI-compatible path end to end against the fake SSE server: ops
// as plain JSON, as fenced JSON, as broken JSON (one repair re-ask), and
// as JSON that fails domain validation (the run fails, no suggestion).
func TestOpenAICompatiblePath(t *testing.T) {
	tests := []struct {
		name     string
		replies  []string
		refuse   []string
		state    RunState
		requests int
		repaired bool
		format   string
	}{
		{name: "json", replies: []string{validOps}, state: RunSucceeded, requests: 1, format: llm.FormatJSONSchema},
		{name: "fenced", replies: []string{"Here you go:\n```json\n" + validOps + "\n```\nHope it helps."}, state: RunSucceeded, requests: 1, format: llm.FormatJSONSchema},
		{name: "broken then repaired", replies: []string{`{"summary":"shorter","ops":[{"op":"replace_block",`, validOps}, state: RunSucceeded, requests: 2, repaired: true, format: llm.FormatJSONSchema},
		{name: "broken twice", replies: []string{`{"ops":[`, `still not json`}, state: RunFailed, requests: 2},
		{name: "domain invalid", replies: []string{`{"summary":"x","ops":[{"op":"replace_block","blockId":"p2","block":{"type":"paragraph","text":"not my block"}}]}`}, state: RunFailed, requests: 1},
		{name: "no json_schema support", refuse: []string{"json_schema"}, replies: []string{validOps}, state: RunSucceeded, requests: 2, format: llm.FormatJSONObject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.OK)
			defer srv.Close()
			srv.RefuseFormats(tt.refuse...)
			srv.SetReplies(tt.replies...)
			w := openAIWorld(t, srv)
			doc := w.article(2, false)
			_, run := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "shorter"})
			if run.State != tt.state {
				t.Fatalf("run %s (error %+v), want %s", run.State, run.Error, tt.state)
			}
			if n := len(srv.Requests()); n != tt.requests {
				t.Fatalf("%d requests to the server, want %d", n, tt.requests)
			}
			first := srv.Requests()[0].Body
			rf, _ := first["response_format"].(map[string]any)
			if rf["type"] != "json_schema" {
				t.Fatalf("the first request asked with response_format %v", first["response_format"])
			}
			sgs, _ := w.svc.Suggestions(ctx, authorA, doc, "", 0)
			if tt.state == RunFailed {
				if len(sgs) != 0 || run.Suggestion != "" || run.AssistantMessage != 0 {
					t.Fatalf("a failed run left suggestions %v", sgs)
				}
				wantCode := CodeInvalid
				if tt.name == "broken twice" {
					wantCode = CodeNotJSON
				}
				if run.Error == nil || run.Error.Code != wantCode {
					t.Fatalf("error %+v, want %s", run.Error, wantCode)
				}
				// Failed calls book with the safe path: usage is still counted.
				rep, _ := w.ledger.Report(1)
				if rep.Totals[quota.Writing].Events != int64(tt.requests) {
					t.Fatalf("%d usage events for %d calls", rep.Totals[quota.Writing].Events, tt.requests)
				}
				return
			}
			if len(sgs) != 1 || run.Repaired != tt.repaired || run.ResponseFormat != tt.format || run.Provider != "openai" || run.Model != "fake-model" {
				t.Fatalf("run repaired %v format %q provider %s/%s, %d suggestions", run.Repaired, run.ResponseFormat, run.Provider, run.Model, len(sgs))
			}
			if !strings.Contains(string(mustJSON(sgs[0].Ops)), "Shorter.") {
				t.Fatalf("ops %s", mustJSON(sgs[0].Ops))
			}
			if len(run.UsageEvents) != tt.requests-len(tt.refuse) || run.Usage.Total == 0 || run.UsageEstimated {
				t.Fatalf("usage %+v events %v", run.Usage, run.UsageEvents)
			}
			rep, _ := w.ledger.Report(1)
			if rep.Totals[quota.Writing].Total != run.Usage.Total {
				t.Fatalf("ledger %d tokens, run %d", rep.Totals[quota.Writing].Total, run.Usage.Total)
			}
		})
	}
}
