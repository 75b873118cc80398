package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/llm/llmtest"
	"github.com/foliodev/folio/internal/quota"
)

// scripted is a provider answering a fixed list of texts, one per call,
// recording the requests.
type scripted struct {
	mu      sync.Mutex
	answers []string
	reqs    []llm.Request
}

func (s *scripted) Name() string  { return "scripted" }
func (s *scripted) Model() string { return "script-1" }
func (s *scripted) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	a := s.answers[0]
	s.answers = s.answers[1:]
	return &textStream{text: a, usage: llm.Usage{Input: 10, Output: 5, Total: 15}}, nil
}

type textStream struct {
	text  string
	usage llm.Usage
	done  bool
}

func (t *textStream) Next() (string, error) {
	if t.done {
		return "", io.EOF
	}
	t.done = true
	return t.text, nil
}
func (t *textStream) Usage() (llm.Usage, bool) { return t.usage, t.done }
func (t *textStream) FinishReason() string     { return "stop" }
func (t *textStream) Close() error             { return nil }

type env struct {
	db     *kv.DB
	ledger *quota.Ledger
	now    func() time.Time
}

func newEnv(t testing.TB) *env {
	t.Helper()
	db, err := kv.Open(t.TempDir(), kv.Options{Create: true, CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
	return &env{db: db, ledger: quota.NewLedger(db, quota.LedgerOptions{Now: now}), now: now}
}

func (e *env) gateway(p llm.Provider, lim quota.Limits) *Gateway {
	routes := map[quota.Category]Route{}
	for _, c := range quota.Categories {
		routes[c] = Route{Provider: p, Policy: quota.NewPolicy(e.db, c, lim, e.now), Source: "compat", MaxOutputTokens: 100}
	}
	return New(routes, e.ledger, e.now)
}

func (e *env) report(t testing.TB) *quota.Report {
	t.Helper()
	r, err := e.ledger.Report(1)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var ask = []llm.Message{{Role: llm.User, Content: "Give me a title as JSON."}}

func TestStructuredRepair(t *testing.T) {
	type titled struct {
		Title string `json:"title"`
	}
	validate := func(raw json.RawMessage) error {
		var v titled
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		if v.Title == "" {
			return errors.New("title is empty")
		}
		return nil
	}
	tests := []struct {
		name     string
		answers  []string
		want     string
		repaired bool
		code     string
		calls    int
	}{
		{"first answer ok", []string{"```json\n{\"title\": \"Spring\"}\n```"}, `{"title":"Spring"}`, false, "", 1},
		{"prose then repaired", []string{"Here is a title: Spring", `{"title": "Spring"}`}, `{"title":"Spring"}`, true, "", 2},
		{"trailing comma then repaired", []string{`{"title": "A",}`, `{"title": "A"}`}, `{"title":"A"}`, true, "", 2},
		{"repair fails too", []string{"no", "still no"}, "", false, CodeNotJSON, 2},
		{"valid JSON but invalid domain", []string{`{"title": ""}`}, "", false, CodeInvalid, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			p := &scripted{answers: tt.answers}
			g := e.gateway(p, quota.Limits{})
			res, err := g.Structured(context.Background(), Request{Category: quota.Attributes, Messages: ask}, validate)
			if CodeOf(err) != tt.code {
				t.Fatalf("err = %v, want code %q", err, tt.code)
			}
			if len(p.reqs) != tt.calls {
				t.Fatalf("%d calls, want %d", len(p.reqs), tt.calls)
			}
			for _, r := range p.reqs {
				if !r.JSON {
					t.Error("structured call without JSON flag")
				}
			}
			if tt.calls == 2 {
				last := p.reqs[1].Messages
				if len(last) != 3 || last[1].Role != llm.Assistant || last[1].Content != tt.answers[0] ||
					!strings.Contains(last[2].Content, "could not be used") {
					t.Errorf("repair request = %+v", last)
				}
			}
			// Every call is booked, failed or not.
			if got := e.report(t).Totals[quota.Attributes]; got.Events != int64(tt.calls) || got.Total != 15*int64(tt.calls) {
				t.Errorf("booked %+v", got)
			}
			if tt.code != "" {
				var ge *Error
				errors.As(err, &ge)
				if ge.Retryable() {
					t.Error("invalid output marked retryable")
				}
				return
			}
			if string(res.JSON) != tt.want || res.Repaired != tt.repaired || res.Usage.Total != 15*int64(tt.calls) {
				t.Errorf("result %s repaired=%v usage %+v", res.JSON, res.Repaired, res.Usage)
			}
		})
	}
}

func TestQuotaCodesPerCategory(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(llmtest.NewEcho(""), quota.Limits{DailyTokens: 300})
	ctx := context.Background()
	if _, err := g.Text(ctx, Request{Category: quota.Writing, Messages: ask, MaxTokens: 100}); err != nil {
		t.Fatal(err)
	}
	_, err := g.Text(ctx, Request{Category: quota.Writing, Messages: ask, MaxTokens: 280})
	var ge *Error
	if !errors.As(err, &ge) || ge.Code != "writing_token_budget_exhausted" || ge.Retryable() || ge.RetryAfter != 12*time.Hour {
		t.Fatalf("writing over budget: %v", err)
	}
	if _, err := g.Text(ctx, Request{Category: quota.Reading, Messages: ask, MaxTokens: 280}); err != nil {
		t.Fatalf("reading refused: %v", err)
	}
}

func TestTextStreamsAndBooks(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(llmtest.NewEcho(""), quota.Limits{})
	var pieces []string
	tr := Trace{RunID: "run-1", TaskID: "task-1", Attempt: 1}
	req := Request{Category: quota.Reading, Messages: []llm.Message{{Role: llm.User, Content: "explain this"}}, Trace: tr,
		OnText: func(s string) { pieces = append(pieces, s) }}
	res, err := g.Text(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Explain this." || strings.Join(pieces, "") != res.Text || len(pieces) != 2 {
		t.Fatalf("text %q pieces %q", res.Text, pieces)
	}
	if !res.Booked || !res.UsageKnown || res.Provider != "echo" || res.Source != "compat" || len(res.Events) != 1 {
		t.Fatalf("result %+v", res)
	}
	// The same traced attempt again (a retried booking) books once.
	res2, _ := g.Text(context.Background(), req)
	if res2.Events[0].ID != res.Events[0].ID {
		t.Fatal("event id not stable for the same trace")
	}
	req.Trace.Attempt = 2
	res3, _ := g.Text(context.Background(), req)
	if res3.Events[0].ID == res.Events[0].ID {
		t.Fatal("a new attempt reused the event id")
	}
	if got := e.report(t).Totals[quota.Reading]; got.Events != 2 {
		t.Fatalf("booked %+v, want 2 events", got)
	}
}

func TestDeferredBooking(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(llmtest.NewEcho(""), quota.Limits{})
	res, err := g.Structured(context.Background(), Request{Category: quota.Writing, Messages: []llm.Message{{Role: llm.User, Content: `{"ops": []}`}},
		DeferBooking: true, Trace: Trace{RunID: "r", TaskID: "t", Attempt: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Booked || len(res.Events) != 1 || e.report(t).Totals[quota.Writing].Events != 0 {
		t.Fatalf("deferred booking booked: %+v", res.Result)
	}
	b := e.db.NewBatch()
	for _, ev := range res.Events {
		if err := e.ledger.BookInBatch(b, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.db.Apply(b, kv.Sync); err != nil {
		t.Fatal(err)
	}
	if e.report(t).Totals[quota.Writing].Events != 1 {
		t.Fatal("not booked by the caller's batch")
	}
}

func TestProviderErrors(t *testing.T) {
	srv := llmtest.NewServer(llmtest.OK)
	defer srv.Close()
	e := newEnv(t)
	p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.BaseURL(), Model: "fake-model", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	g := e.gateway(p, quota.Limits{DailyTokens: 1_000_000})
	tests := []struct {
		sc        llmtest.Scenario
		code      string
		retryable bool
		charged   bool // tokens charged and an event booked
		estimated bool
	}{
		{llmtest.OK, "", false, true, false},
		{llmtest.Unauthorized, CodeUnauthorized, false, false, false},
		{llmtest.RateLimited, CodeRateLimited, true, false, false},
		{llmtest.ErrorMidStream, CodeProviderError, true, true, true},
		{llmtest.CutBeforeUsage, CodeStreamCut, true, true, true},
		{llmtest.NoUsage, "", false, true, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.sc), func(t *testing.T) {
			srv.SetScenario(tt.sc)
			before, _ := g.routes[quota.Reading].Policy.Status()
			beforeEvents := e.report(t).Totals[quota.Reading].Events
			res, err := g.Text(context.Background(), Request{Category: quota.Reading, Messages: ask, MaxTokens: 50})
			if CodeOf(err) != tt.code {
				t.Fatalf("err = %v, want %q", err, tt.code)
			}
			if err != nil {
				var ge *Error
				errors.As(err, &ge)
				if ge.Retryable() != tt.retryable || ge.Provider != "openai" {
					t.Errorf("retryable %v provider %q", ge.Retryable(), ge.Provider)
				}
				if tt.sc == llmtest.RateLimited && ge.RetryAfter != 7*time.Second {
					t.Errorf("retry after %v", ge.RetryAfter)
				}
			}
			after, _ := g.routes[quota.Reading].Policy.Status()
			charged := after.Tokens - before.Tokens
			booked := e.report(t).Totals[quota.Reading].Events - beforeEvents
			if (charged > 0) != tt.charged || (booked == 1) != tt.charged || after.Reserved != 0 || after.InFlight != 0 {
				t.Fatalf("charged %d booked %d status %+v", charged, booked, after)
			}
			if tt.estimated {
				want := llm.CountInput(ask) + 50
				if charged != want || !res.Events[0].Estimated {
					t.Errorf("charged %d, want the reservation %d; event %+v", charged, want, res.Events)
				}
			}
		})
	}
}

func TestOpenFromConfig(t *testing.T) {
	e := newEnv(t)
	cfg, err := config.Load("", func(k string) (string, bool) {
		v, ok := map[string]string{"FOLIO_AI_WRITING_PROVIDER": "openai", "FOLIO_AI_WRITING_BASE_URL": "http://127.0.0.1:1/v1",
			"FOLIO_AI_WRITING_MODEL": "m"}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Open(cfg, e.db, e.ledger, e.now)
	if err != nil {
		t.Fatal(err)
	}
	src := g.Sources()
	if src[quota.Writing] != "dedicated" || src[quota.Reading] != "default" {
		t.Fatalf("sources %v", src)
	}
	if r, _ := g.Route(quota.Writing); r.Provider.Name() != "openai" || r.Provider.Model() != "m" {
		t.Fatalf("writing route %+v", r)
	}
	if _, err := g.Text(context.Background(), Request{Category: "poetry", Messages: ask}); CodeOf(err) != CodeNotConfigured {
		t.Fatalf("unknown category: %v", err)
	}
}

// Nothing of the prompt or the answer is stored: only counts.
func TestUsageHoldsNoContent(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(llmtest.NewEcho(""), quota.Limits{})
	secret := "zanzibar-quokka-4471 private diary"
	res, err := g.Text(context.Background(), Request{Category: quota.Reading, User: "user-8812",
		Messages: []llm.Message{{Role: llm.User, Content: secret}}})
	if err != nil {
		t.Fatal(err)
	}
	it, _ := e.db.NewIter(nil)
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
		kvs := string(it.Key()) + string(it.Value())
		for _, s := range []string{"zanzibar", "quokka", "diary", "Zanzibar", "user-8812"} {
			if strings.Contains(kvs, s) {
				t.Fatalf("store holds %q in %q", s, it.Key())
			}
		}
	}
	if n == 0 || !res.Booked {
		t.Fatal("nothing stored")
	}
}
