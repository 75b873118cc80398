package reading

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
)

// Specific error codes (stable, append-only).
const (
	// CodeDisabled (kind disabled): [reading] enabled is off.
	CodeDisabled = "reading_disabled"
	// CodeVisitorLimited (kind rate limited): the visitor or its address
	// made too many requests this minute, or has one running.
	CodeVisitorLimited = "reading_visitor_limited"
	// CodeBusy (kind unavailable): the explanations running at once
	// reached [reading] concurrency.
	CodeBusy = "reading_busy"
)

// Request is one explanation asked by a visitor of a published public
// article (the caller has checked that it is one).
type Request struct {
	// Version identifies the article version (its hash): the cache key.
	Version string
	Title   string
	Body    flowdoc.Document
	// LoadBody, when set, loads Body on a cache miss only: a cache hit
	// then costs no read of the article.
	LoadBody func(ctx context.Context) (flowdoc.Document, error)
	// Passage is the selected text; Block optionally the block it is in.
	Passage string
	Block   string
	// Question is an optional short question about the passage.
	Question string
	// Visitor is the anonymous visitor id; Addr the client address.
	Visitor string
	Addr    string
}

// Event is one step of a streamed explanation.
type Event struct {
	// Type is "meta" (first), "delta" (answer text) or "done" (last).
	Type string `json:"-"`
	// Meta and done.
	Cached   bool   `json:"cached,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Extractive is true when the answer was assembled from the article
	// by the local engine, not written by a model.
	Extractive bool `json:"extractive,omitempty"`
	// Text is a delta's piece of the answer.
	Text string `json:"text,omitempty"`
	// Usage is done's token usage (zero for cache hits, which are not
	// billed).
	Usage *llm.Usage `json:"usage,omitempty"`
}

// Options configure a Service.
type Options struct {
	// Route is the reading category's route (its own policy and
	// counters). A local provider in it is replaced by Local.
	Route  assistant.Route
	Ledger *quota.Ledger
	Config config.Reading
	Now    func() time.Time
}

// Service explains passages of public articles to visitors. It is safe
// for concurrent use.
type Service struct {
	gw     *assistant.Gateway
	ledger *quota.Ledger
	route  assistant.Route
	cfg    config.Reading
	now    func() time.Time

	global chan struct{} // running explanations ([reading] concurrency)

	mu       sync.Mutex         // guards the fields below
	visitors map[string]*window // per visitor+address
	addrs    map[string]*window // per address
	running  map[string]int     // per visitor+address
	// addrRunning counts running explanations per address.
	addrRunning map[string]int
	inflight    map[string]*flight // model calls by cache key
	cache       *lru               // answers by cache key
	hits        atomic.Int64       // cache hits since start
	misses      atomic.Int64       // model calls since start
}

// flight is a model call in progress that identical requests wait for.
type flight struct {
	done chan struct{}
	ans  *answer // nil when the call failed
}

// answer is a cached explanation.
type answer struct {
	text, provider, model string
	extractive            bool
}

// New returns the service.
func New(o Options) (*Service, error) {
	if o.Route.Provider == nil || o.Route.Policy == nil {
		return nil, fmt.Errorf("reading: the route needs a provider and a policy")
	}
	if o.Route.Policy.Category() != quota.Reading {
		return nil, fmt.Errorf("reading: the route's policy is %s's, want reading", o.Route.Policy.Category())
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	rt := o.Route
	if rt.Provider.Name() == "local" {
		rt.Provider = NewLocal(rt.Provider.Model())
	}
	if o.Config.Concurrency <= 0 {
		o.Config = config.DefaultReading()
	}
	return &Service{
		gw:     assistant.New(map[quota.Category]assistant.Route{quota.Reading: rt}, o.Ledger, o.Now),
		ledger: o.Ledger, route: rt, cfg: o.Config, now: o.Now,
		global:   make(chan struct{}, o.Config.Concurrency),
		visitors: map[string]*window{}, addrs: map[string]*window{}, running: map[string]int{}, addrRunning: map[string]int{},
		inflight: map[string]*flight{}, cache: newLRU(o.Config.CacheBytes),
	}, nil
}

// Enabled reports the [reading] switch.
func (s *Service) Enabled() bool { return s.cfg.Enabled }

// Stats are the reading assistant's counters since start.
type Stats struct {
	CacheHits    int64 `json:"cacheHits"`
	ModelCalls   int64 `json:"modelCalls"`
	CacheEntries int   `json:"cacheEntries"`
	CacheBytes   int64 `json:"cacheBytes"`
}

// Stats returns the counters.
func (s *Service) Stats() Stats {
	s.mu.Lock()
	n, b := s.cache.len(), s.cache.bytes
	s.mu.Unlock()
	return Stats{CacheHits: s.hits.Load(), ModelCalls: s.misses.Load(), CacheEntries: n, CacheBytes: b}
}

// request is the JSON the model reads.
type request struct {
	Title    string      `json:"title"`
	Passage  string      `json:"passage"`
	Block    string      `json:"block,omitempty"`
	Question string      `json:"question,omitempty"`
	Article  []textBlock `json:"article"`
}

type textBlock struct {
	Block string `json:"block,omitempty"`
	Type  string `json:"type"`
	Text  string `json:"text"`
}

// Bounds of the article text sent with a request.
const (
	maxArticleBlocks = 600
	maxArticleText   = 32 << 10
	maxAnswerTokens  = 600
	maxVisitorID     = 64
	maxKeys          = 50_000 // visitors and addresses remembered
)

const systemPrompt = `You explain a passage of a published article to one of its readers. The user message is a JSON object with the article's title, the selected passage, an optional question about it, and the article's text blocks.
Explain the passage in the article's language, briefly (at most 150 words), using what the article says; say so when the article does not answer the question. Plain text, no markup.`

// Prompt returns the messages sent for req: the fixed system prompt and
// one user message with the title, passage, question and the article's
// text (bounded).
func Prompt(req Request) []llm.Message {
	in := request{Title: req.Title, Passage: req.Passage, Block: req.Block, Question: req.Question, Article: articleText(req.Body)}
	b, _ := json.Marshal(in)
	return []llm.Message{{Role: llm.System, Content: systemPrompt}, {Role: llm.User, Content: string(b)}}
}

func articleText(d flowdoc.Document) []textBlock {
	out := []textBlock{}
	size := 0
	var walk func(bs []flowdoc.Block)
	walk = func(bs []flowdoc.Block) {
		for _, b := range bs {
			if len(out) >= maxArticleBlocks || size >= maxArticleText {
				return
			}
			var text string
			switch b.Type {
			case flowdoc.List:
				var items []string
				var w func([]flowdoc.ListItem)
				w = func(its []flowdoc.ListItem) {
					for _, it := range its {
						items = append(items, flowdoc.PlainText(it.RichText))
						w(it.Items)
					}
				}
				w(b.Items)
				text = strings.Join(items, "\n")
			case flowdoc.Code, flowdoc.Equation, flowdoc.Media, flowdoc.Table, flowdoc.Bookmark, flowdoc.File, flowdoc.Embed:
			default:
				text = flowdoc.PlainText(b.RichText)
			}
			if strings.TrimSpace(text) != "" {
				size += len(text)
				out = append(out, textBlock{Block: b.ID, Type: string(b.Type), Text: text})
			}
			walk(b.Children)
			for _, c := range b.Cols {
				walk(c.Blocks)
			}
		}
	}
	walk(d.Blocks)
	return out
}

// Check validates req's sizes and visitor id; transports call it before
// they start answering.
func (s *Service) Check(req Request) error {
	if !s.cfg.Enabled {
		return errs.C(errs.Disabled, CodeDisabled, "the reading assistant is switched off on this site")
	}
	p := strings.TrimSpace(req.Passage)
	switch {
	case p == "":
		return errs.E(errs.Invalid, "select a passage to explain")
	case len(req.Passage) > s.cfg.MaxPassage:
		return errs.E(errs.TooLarge, "the passage is %d bytes; at most %d can be explained at once", len(req.Passage), s.cfg.MaxPassage)
	case len(req.Question) > s.cfg.MaxQuestion:
		return errs.E(errs.TooLarge, "the question is %d bytes; at most %d", len(req.Question), s.cfg.MaxQuestion)
	case !utf8.ValidString(req.Passage) || !utf8.ValidString(req.Question):
		return errs.E(errs.Invalid, "passage and question must be UTF-8 text")
	case len(req.Visitor) > maxVisitorID || len(req.Block) > 64:
		return errs.E(errs.Invalid, "visitor id and block id are at most 64 bytes")
	}
	return nil
}

func cacheKey(req Request) string {
	h := sha256.New()
	for _, part := range []string{req.Version, req.Block, strings.TrimSpace(req.Passage), strings.TrimSpace(req.Question)} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Explain answers req, calling emit with a meta event, the answer's
// deltas and a done event. A cached answer (same article version,
// passage, block and question) is sent again without a model call and
// without touching the reading policy or the ledger: hits are not billed.
// Identical requests that arrive while the model answers wait for that
// answer. Every request counts against the visitor's limits.
//
// Errors before the first event are returned with nothing emitted (the
// caller answers them as errors); an error after it is returned too, and
// the caller ends the stream with it.
func (s *Service) Explain(ctx context.Context, req Request, emit func(Event) error) error {
	if err := s.Check(req); err != nil {
		return err
	}
	release, err := s.admit(req)
	if err != nil {
		return err
	}
	defer release()
	key := cacheKey(req)
	for {
		s.mu.Lock()
		if a, ok := s.cache.get(key); ok {
			s.mu.Unlock()
			s.hits.Add(1)
			return s.replay(a, emit)
		}
		f, running := s.inflight[key]
		if !running {
			f = &flight{done: make(chan struct{})}
			s.inflight[key] = f
			s.mu.Unlock()
			return s.call(ctx, req, key, f, emit)
		}
		s.mu.Unlock()
		select {
		case <-f.done:
			if f.ans == nil {
				continue // it failed: try ourselves
			}
			s.hits.Add(1)
			return s.replay(f.ans, emit)
		case <-ctx.Done():
			return errs.Wrap(errs.Canceled, ctx.Err())
		}
	}
}

func (s *Service) replay(a *answer, emit func(Event) error) error {
	if s.ledger != nil {
		s.ledger.CountCacheHit(quota.Reading)
	}
	if err := emit(Event{Type: "meta", Cached: true, Provider: a.provider, Model: a.model, Extractive: a.extractive}); err != nil {
		return err
	}
	if err := emit(Event{Type: "delta", Text: a.text}); err != nil {
		return err
	}
	return emit(Event{Type: "done", Cached: true, Usage: &llm.Usage{}})
}

// call asks the model, streaming its answer, and caches it.
func (s *Service) call(ctx context.Context, req Request, key string, f *flight, emit func(Event) error) (err error) {
	var ans *answer
	defer func() {
		s.mu.Lock()
		if ans != nil {
			s.cache.put(key, ans)
		}
		f.ans = ans
		delete(s.inflight, key)
		s.mu.Unlock()
		close(f.done)
	}()
	extractive := s.route.Provider.Name() == "local"
	if req.LoadBody != nil {
		body, err := req.LoadBody(ctx)
		if err != nil {
			return err
		}
		req.Body = body
	}
	// Refuse before the stream starts when the policy would (a spent
	// budget or request cap), so that the visitor gets a 429, not a 200
	// that ends in an error event. Concurrency is left to the call.
	msgs := Prompt(req)
	if err := s.route.Policy.Check(partyKey(req), llm.CountInput(msgs)+maxAnswerTokens); err != nil {
		var qe *quota.Error
		if errors.As(err, &qe) {
			return retry(qe.RetryAfter, errs.C(errs.RateLimited, qe.Code(), "the reading assistant has reached its limit: %s; try again later", qe.Limit))
		}
		return err
	}
	// The stream starts with the model's first text, not before: a
	// refusal of the gateway (the policy's concurrency, a provider that
	// fails at once) then reaches the visitor as an error answer (429,
	// 503), not as a 200 stream that ends in an error event.
	started := false
	start := func() error {
		if started {
			return nil
		}
		started = true
		return emit(Event{Type: "meta", Provider: s.route.Provider.Name(), Model: s.route.Provider.Model(), Extractive: extractive})
	}
	s.misses.Add(1)
	var emitErr error
	res, err := s.gw.Text(ctx, assistant.Request{Category: quota.Reading, User: partyKey(req), Messages: msgs,
		MaxTokens: maxAnswerTokens, OnText: func(piece string) {
			if emitErr == nil {
				emitErr = start()
			}
			if emitErr == nil {
				emitErr = emit(Event{Type: "delta", Text: piece})
			}
		}})
	if err != nil {
		var qe *quota.Error
		if !started && errors.As(err, &qe) {
			return retry(qe.RetryAfter, errs.C(errs.RateLimited, qe.Code(), "the reading assistant has reached its limit: %s; try again later", qe.Limit))
		}
		return err
	}
	if emitErr == nil {
		emitErr = start()
	}
	if emitErr != nil {
		return emitErr
	}
	ans = &answer{text: res.Text, provider: res.Provider, model: res.Model, extractive: extractive}
	u := res.Usage
	return emit(Event{Type: "done", Usage: &u})
}

func visitorKey(req Request) string { return req.Visitor + "|" + req.Addr }

// partyKey is whom the reading policy's shares are kept for: the client
// address, so that visitor ids a client makes up at will share one.
func partyKey(req Request) string {
	if req.Addr == "" {
		return visitorKey(req)
	}
	return "addr " + req.Addr
}

// addrConcurrency is the explanations one address may have running: a
// quarter of [reading] concurrency, at least one, whatever visitor ids
// it sends.
func (s *Service) addrConcurrency() int { return max(1, s.cfg.Concurrency/4) }

// admit applies the visitor limits: requests per minute per visitor and
// per address, running requests per visitor, and the global concurrency.
// It never waits: a visitor over a limit is told when to come back.
func (s *Service) admit(req Request) (func(), error) {
	vk := visitorKey(req)
	now := s.now()
	s.mu.Lock()
	if len(s.visitors) > maxKeys || len(s.addrs) > maxKeys {
		s.prune(now)
	}
	vw := s.visitors[vk]
	if vw == nil {
		vw = &window{}
		s.visitors[vk] = vw
	}
	aw := s.addrs[req.Addr]
	if aw == nil {
		aw = &window{}
		s.addrs[req.Addr] = aw
	}
	if s.running[vk] >= s.cfg.VisitorConcurrency {
		s.mu.Unlock()
		return nil, retry(time.Second, errs.C(errs.RateLimited, CodeVisitorLimited, "an explanation for you is still running; wait for it to finish"))
	}
	if s.addrRunning[req.Addr] >= s.addrConcurrency() {
		s.mu.Unlock()
		return nil, retry(time.Second, errs.C(errs.RateLimited, CodeVisitorLimited, "explanations from your network are still running; wait for one to finish"))
	}
	if d := vw.full(now, s.cfg.VisitorPerMinute); d > 0 {
		s.mu.Unlock()
		return nil, retry(d, errs.C(errs.RateLimited, CodeVisitorLimited, "at most %d explanations per minute; try again in a moment", s.cfg.VisitorPerMinute))
	}
	if d := aw.full(now, s.cfg.AddressPerMinute); d > 0 {
		s.mu.Unlock()
		return nil, retry(d, errs.C(errs.RateLimited, CodeVisitorLimited, "too many explanations from your network; try again in a moment"))
	}
	select {
	case s.global <- struct{}{}:
	default:
		s.mu.Unlock()
		return nil, retry(time.Second, errs.C(errs.Unavailable, CodeBusy, "the reading assistant is busy; try again in a moment"))
	}
	vw.add(now)
	aw.add(now)
	s.running[vk]++
	s.addrRunning[req.Addr]++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.running[vk]--; s.running[vk] <= 0 {
			delete(s.running, vk)
		}
		if s.addrRunning[req.Addr]--; s.addrRunning[req.Addr] <= 0 {
			delete(s.addrRunning, req.Addr)
		}
		s.mu.Unlock()
		<-s.global
	}, nil
}

// prune forgets visitors and addresses idle for a minute. s.mu is held.
func (s *Service) prune(now time.Time) {
	for k, w := range s.visitors {
		if w.idle(now) && s.running[k] == 0 {
			delete(s.visitors, k)
		}
	}
	for k, w := range s.addrs {
		if w.idle(now) {
			delete(s.addrs, k)
		}
	}
}

// window is a sliding one-minute window of request times.
type window struct{ times []time.Time }

func (w *window) trim(now time.Time) {
	i := 0
	for i < len(w.times) && now.Sub(w.times[i]) >= time.Minute {
		i++
	}
	w.times = w.times[i:]
}

// full returns how long until a request fits under limit, 0 when it does.
func (w *window) full(now time.Time, limit int) time.Duration {
	w.trim(now)
	if len(w.times) < limit {
		return 0
	}
	return w.times[0].Add(time.Minute).Sub(now)
}

func (w *window) add(now time.Time) { w.times = append(w.times, now) }

func (w *window) idle(now time.Time) bool {
	w.trim(now)
	return len(w.times) == 0
}

// lru is the answer cache: least recently used out first, bounded by the
// bytes of its keys and answers.
type lru struct {
	budget int64
	bytes  int64
	order  *list.List // of *lruEntry, most recent first
	byKey  map[string]*list.Element
}

type lruEntry struct {
	key string
	ans *answer
}

func newLRU(budget int64) *lru {
	return &lru{budget: budget, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *lru) len() int { return len(c.byKey) }

func (c *lru) get(k string) (*answer, bool) {
	e, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry).ans, true
}

func entrySize(k string, a *answer) int64 {
	return int64(len(k) + len(a.text) + len(a.provider) + len(a.model) + 64)
}

func (c *lru) put(k string, a *answer) {
	n := entrySize(k, a)
	if n > c.budget {
		return
	}
	if e, ok := c.byKey[k]; ok {
		c.bytes -= entrySize(k, e.Value.(*lruEntry).ans)
		c.order.Remove(e)
		delete(c.byKey, k)
	}
	for c.bytes+n > c.budget {
		last := c.order.Back()
		le := last.Value.(*lruEntry)
		c.bytes -= entrySize(le.key, le.ans)
		c.order.Remove(last)
		delete(c.byKey, le.key)
	}
	c.byKey[k] = c.order.PushFront(&lruEntry{key: k, ans: a})
	c.bytes += n
}

// retry sets when a refused request may be retried.
func retry(d time.Duration, e *errs.Error) error {
	e.RetryAfter = d
	return e
}
