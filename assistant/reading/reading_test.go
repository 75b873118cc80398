package reading

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
)

var ctx = context.Background()

type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fixedClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func openDB(t testing.TB, dir string) *kv.DB {
	t.Helper()
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func newService(t testing.TB, db *kv.DB, p llm.Provider, cfg config.Reading, now func() time.Time) (*Service, *quota.Ledger) {
	t.Helper()
	ledger := quota.NewLedger(db, quota.LedgerOptions{Now: now})
	s, err := New(Options{Route: assistant.Route{Provider: p, Policy: quota.NewPolicy(db, quota.Reading, quota.Limits{}, now)},
		Ledger: ledger, Config: cfg, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return s, ledger
}

func para(id, text string) flowdoc.Block {
	return flowdoc.Block{ID: id, Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: text}}}
}

func heading(id, text string) flowdoc.Block {
	return flowdoc.Block{ID: id, Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: 2}, RichText: []flowdoc.Run{{Text: text}}}
}

func article() flowdoc.Document {
	return flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
		heading("h1", "Refs and versions"),
		para("p1", "A ref is a named pointer to a version. Refs move by compare-and-swap."),
		heading("h2", "Checkpoints"),
		para("p2", "Saving a draft protects work. A checkpoint seals the draft into a version that can be compared. Every ref move is logged."),
		heading("h3", "Why refs matter"),
		para("p3", "Without refs, nobody knows which version is current."),
	}}
}

func collect(t testing.TB, s *Service, req Request) (text string, evs []Event, err error) {
	t.Helper()
	var b strings.Builder
	err = s.Explain(ctx, req, func(e Event) error {
		evs = append(evs, e)
		if e.Type == "delta" {
			b.WriteString(e.Text)
		}
		return nil
	})
	return b.String(), evs, err
}

func TestLocalEngineIsExtractiveAndLabelled(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	s, _ := newService(t, db, llm.NewLocal(""), config.DefaultReading(), nil)
	text, evs, err := collect(t, s, Request{Version: "v1", Title: "Folio", Body: article(), Block: "p2",
		Passage: "A checkpoint seals the draft", Question: "When does a ref move?", Visitor: "v", Addr: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].Type != "meta" || !evs[0].Extractive || evs[0].Provider != "local" || evs[len(evs)-1].Type != "done" {
		t.Fatalf("events = %+v", evs)
	}
	for _, want := range []string{
		"Extractive explanation from this article (no model was used).",
		"In context: “Saving a draft protects work. A checkpoint seals the draft into a version that can be compared. Every ref move is logged.”",
		"Section: “Checkpoints”",
		"On your question, the article says:\n- “Refs move by compare-and-swap.”",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("explanation lacks %q:\n%s", want, text)
		}
	}
	text, _, err = collect(t, s, Request{Version: "v1", Title: "Folio", Body: article(), Passage: "Without refs", Visitor: "w", Addr: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Defined elsewhere in the article:\n- “A ref is a named pointer to a version.”") ||
		!strings.Contains(text, "Related sections: “Refs and versions”") {
		t.Errorf("explanation lacks the definition or the related heading:\n%s", text)
	}
	zh := flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
		heading("z1", "草稿与版本"), para("z2", "检查点是把草稿封存成版本的时刻。"), para("z3", "作者每隔一段时间就会生成检查点。")}}
	text, _, err = collect(t, s, Request{Version: "v2", Body: zh, Passage: "生成检查点", Visitor: "x", Addr: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "抽取式解释") || !strings.Contains(text, "「检查点是把草稿封存成版本的时刻。」") {
		t.Errorf("Chinese explanation:\n%s", text)
	}
}

func TestCacheHitsAreNotBilled(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	s, ledger := newService(t, db, llm.NewLocal(""), config.DefaultReading(), nil)
	req := Request{Version: "v1", Body: article(), Passage: "Refs move", Visitor: "v1", Addr: "a"}
	first, evs1, err := collect(t, s, req)
	if err != nil || evs1[0].Cached {
		t.Fatalf("first: %v %+v", err, evs1)
	}
	req.Visitor = "v2" // another visitor, same article version and passage
	second, evs2, err := collect(t, s, req)
	if err != nil || !evs2[0].Cached || second != first || evs2[len(evs2)-1].Usage.Total != 0 {
		t.Fatalf("second: %v %+v", err, evs2)
	}
	st, _ := s.route.Policy.Status()
	rep, _ := ledger.Report(1)
	if st.Requests != 1 || rep.Totals[quota.Reading].Events != 1 || rep.Totals[quota.Reading].CacheHits != 1 {
		t.Fatalf("policy requests %d, ledger events %d; want 1 and 1", st.Requests, rep.Totals[quota.Reading].Events)
	}
	if got := s.Stats(); got.CacheHits != 1 || got.ModelCalls != 1 {
		t.Fatalf("stats = %+v", got)
	}
	// Another version of the article is another key.
	req.Version = "v2"
	if _, evs, _ := collect(t, s, req); evs[0].Cached {
		t.Fatal("a new version hit the old version's cache")
	}
}

// gate is a provider that blocks until released.
type gate struct {
	release chan struct{}
	started chan struct{}
}

func (g *gate) Name() string  { return "gate" }
func (g *gate) Model() string { return "gate-1" }
func (g *gate) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	g.started <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
	}
	return llm.NewPieceStream(ctx, "gate", []string{"answer"}, "stop", llm.Usage{Input: 10, Output: 1}), nil
}

func TestVisitorLimits(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	clk := &fixedClock{t: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)}
	cfg := config.DefaultReading()
	cfg.VisitorPerMinute, cfg.AddressPerMinute = 3, 5
	s, _ := newService(t, db, llm.NewLocal(""), cfg, clk.now)
	ask := func(visitor, addr string, n int) error {
		_, _, err := collect(t, s, Request{Version: "v", Body: article(), Passage: fmt.Sprint("Refs ", n), Visitor: visitor, Addr: addr})
		return err
	}
	for i := 0; i < 3; i++ {
		if err := ask("alpha", "10.0.0.1", i); err != nil {
			t.Fatal(err)
		}
	}
	err := ask("alpha", "10.0.0.1", 3)
	if errs.CodeOf(err) != CodeVisitorLimited || errs.KindOf(err) != errs.RateLimited || errs.RetryAfterOf(err) <= 0 {
		t.Fatalf("4th request in a minute: %v", err)
	}
	// A new visitor id from the same address: its own window, but the
	// address's bound (5) holds.
	if err := ask("beta", "10.0.0.1", 4); err != nil {
		t.Fatal(err)
	}
	if err := ask("beta", "10.0.0.1", 5); err != nil {
		t.Fatal(err)
	}
	if err := ask("gamma", "10.0.0.1", 6); errs.CodeOf(err) != CodeVisitorLimited {
		t.Fatalf("address over its bound: %v", err)
	}
	if err := ask("alpha", "10.0.0.2", 7); err != nil {
		t.Fatalf("the same id from another address is another visitor: %v", err)
	}
	clk.add(time.Minute)
	if err := ask("alpha", "10.0.0.1", 8); err != nil {
		t.Fatalf("after a minute: %v", err)
	}

	// Concurrency: one running explanation per visitor.
	g := &gate{release: make(chan struct{}), started: make(chan struct{}, 1)}
	s2, _ := newService(t, db, g, cfg, clk.now)
	done := make(chan error, 1)
	go func() {
		_, _, err := collect(t, s2, Request{Version: "v", Body: article(), Passage: "x", Visitor: "slow", Addr: "10.0.0.9"})
		done <- err
	}()
	<-g.started
	_, _, err = collect(t, s2, Request{Version: "v", Body: article(), Passage: "y", Visitor: "slow", Addr: "10.0.0.9"})
	if errs.CodeOf(err) != CodeVisitorLimited {
		t.Fatalf("second running request of a visitor: %v", err)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Sizes are bounded.
	big := Request{Version: "v", Body: article(), Passage: strings.Repeat("x", cfg.MaxPassage+1), Visitor: "v", Addr: "a"}
	if _, _, err := collect(t, s, big); errs.KindOf(err) != errs.TooLarge {
		t.Fatalf("oversized passage: %v", err)
	}
}

// A burst of 1,000 reading requests from many visitors leaves the writing
// category's budget and counters exactly as they were, and the reading
// counters separate from it across a restart.
func TestReadingBurstNeverTouchesWritingBudget(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	writing := quota.NewPolicy(db, quota.Writing, quota.Limits{DailyTokens: 5000}, nil)
	lease, err := writing.Acquire(ctx, "author-a", 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Settle(1234); err != nil {
		t.Fatal(err)
	}
	before, _ := writing.Status()
	cfg := config.DefaultReading()
	cfg.VisitorPerMinute, cfg.AddressPerMinute, cfg.Concurrency = 1000, 1000, 64
	s, ledger := newService(t, db, llm.NewLocal(""), cfg, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	sem := make(chan struct{}, 32)
	for i := 0; i < 1000; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			_, _, err := collect(t, s, Request{Version: "v1", Body: article(), Passage: fmt.Sprintf("Refs %d", i%50),
				Visitor: fmt.Sprintf("visitor-%d", i), Addr: fmt.Sprintf("10.0.%d.%d", i/250, i%250)})
			code := "ok"
			if err != nil {
				code = errs.CodeOf(err)
			}
			mu.Lock()
			outcomes[code]++
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	served := outcomes["ok"]
	if served+outcomes[CodeBusy] != 1000 || served < 500 {
		t.Fatalf("outcomes: %v; want only answers and reading_busy, mostly answers", outcomes)
	}
	after, _ := writing.Status()
	if after.Requests != before.Requests || after.Tokens != before.Tokens || after.TokenLeft != before.TokenLeft {
		t.Fatalf("writing counters moved: before %+v, after %+v", before, after)
	}
	st := s.Stats()
	if st.ModelCalls > 50 || int(st.CacheHits+st.ModelCalls) != served {
		t.Fatalf("%d served, stats %+v: want at most 50 model calls (one per passage), the rest cache hits", served, st)
	}
	reading, _ := s.route.Policy.Status()
	if reading.Requests != st.ModelCalls {
		t.Fatalf("reading policy counted %d requests for %d model calls", reading.Requests, st.ModelCalls)
	}
	rep, _ := ledger.Report(1)
	if rep.Totals[quota.Writing].Events != 0 || rep.Totals[quota.Reading].Events != st.ModelCalls {
		t.Fatalf("ledger: %+v", rep.Totals)
	}
	db.Close()

	// Across a restart each category reads back its own counters.
	db = openDB(t, dir)
	defer db.Close()
	for _, c := range []struct {
		cat      quota.Category
		requests int64
	}{{quota.Writing, before.Requests}, {quota.Reading, reading.Requests}, {quota.Attributes, 0}} {
		st, err := quota.NewPolicy(db, c.cat, quota.Limits{}, nil).Status()
		if err != nil || st.Requests != c.requests {
			t.Fatalf("%s after restart: %+v, %v; want %d requests", c.cat, st, err, c.requests)
		}
	}
	if st, _ := quota.NewPolicy(db, quota.Writing, quota.Limits{}, nil).Status(); st.Tokens != 1234 {
		t.Fatalf("writing tokens after restart: %d", st.Tokens)
	}
}

// A spent reading policy refuses before the stream starts.
func TestPolicyRefusalBeforeTheStream(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	s, err := New(Options{Route: assistant.Route{Provider: llm.NewLocal(""),
		Policy: quota.NewPolicy(db, quota.Reading, quota.Limits{RequestsPerMinute: 1}, nil)},
		Ledger: quota.NewLedger(db, quota.LedgerOptions{}), Config: config.DefaultReading()})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := collect(t, s, Request{Version: "v", Body: article(), Passage: "a", Visitor: "x", Addr: "1"}); err != nil {
		t.Fatal(err)
	}
	_, evs, err := collect(t, s, Request{Version: "v", Body: article(), Passage: "b", Visitor: "y", Addr: "2"})
	if errs.CodeOf(err) != "reading_rate_limited" || errs.KindOf(err) != errs.RateLimited || len(evs) != 0 {
		t.Fatalf("over the policy: %v, %d events", err, len(evs))
	}
	// A cached answer is still served: hits never ask the policy.
	if _, evs, err := collect(t, s, Request{Version: "v", Body: article(), Passage: "a", Visitor: "z", Addr: "3"}); err != nil || !evs[0].Cached {
		t.Fatalf("cache hit over the policy: %v", err)
	}
}

// TestRotatingVisitorIDsDoNotHoldEverySlot: one address that makes up a
// new visitor id for each request, with a slow model, holds at most a
// quarter of the running explanations; a visitor elsewhere gets one.
func TestRotatingVisitorIDsDoNotHoldEverySlot(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	clk := &fixedClock{t: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)}
	cfg := config.DefaultReading()
	cfg.Concurrency, cfg.VisitorPerMinute, cfg.AddressPerMinute = 8, 100, 100
	g := &gate{release: make(chan struct{}), started: make(chan struct{}, 8)}
	s, _ := newService(t, db, g, cfg, clk.now)
	done := make(chan error, 8)
	held := 0
	for i := 0; i < 8; i++ {
		req := Request{Version: "v", Body: article(), Passage: fmt.Sprint("p", i), Visitor: fmt.Sprint("id", i), Addr: "10.0.0.1"}
		if i < 2 {
			go func() { _, _, err := collect(t, s, req); done <- err }()
			<-g.started
			held++
			continue
		}
		if _, _, err := collect(t, s, req); errs.CodeOf(err) != CodeVisitorLimited {
			t.Fatalf("explanation %d of one address with a fresh id: %v", i, err)
		}
	}
	go func() {
		_, _, err := collect(t, s, Request{Version: "v", Body: article(), Passage: "q", Visitor: "reader", Addr: "10.0.0.2"})
		done <- err
	}()
	<-g.started
	close(g.release)
	for i := 0; i < held+1; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestConcurrencyRefusalBeforeTheStream: when the reading policy's
// concurrency is taken, the visitor gets the refusal as an error, with
// no event sent (the server answers it 429, not a 200 stream).
func TestConcurrencyRefusalBeforeTheStream(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	g := &gate{release: make(chan struct{}), started: make(chan struct{}, 1)}
	s, err := New(Options{Route: assistant.Route{Provider: g,
		Policy: quota.NewPolicy(db, quota.Reading, quota.Limits{Concurrency: 1}, nil)},
		Ledger: quota.NewLedger(db, quota.LedgerOptions{}), Config: config.DefaultReading()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := collect(t, s, Request{Version: "v", Body: article(), Passage: "a", Visitor: "x", Addr: "1"})
		done <- err
	}()
	<-g.started
	_, evs, err := collect(t, s, Request{Version: "v", Body: article(), Passage: "b", Visitor: "y", Addr: "2"})
	if errs.CodeOf(err) != "reading_concurrency_limited" || errs.KindOf(err) != errs.RateLimited || errs.RetryAfterOf(err) <= 0 || len(evs) != 0 {
		t.Fatalf("over the policy's concurrency: %v, events %+v", err, evs)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
