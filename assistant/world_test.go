package assistant

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/kv/pgkv/pgtest"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/internal/task"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/content"
	"github.com/foliodev/folio/persona/index"
)

// fakeModel is a scripted provider: answer decides each reply from the
// request (autoAnswer by default). It records requests, can hold a reply
// until released, and reports usage for every completed stream.
type fakeModel struct {
	mu      sync.Mutex
	answer  func(req llm.Request) string
	reqs    []llm.Request
	hold    chan struct{} // when set, a stream waits for it to close before answering
	started chan struct{} // when set, receives once per stream start
	elapsed time.Duration // total time spent inside Stream/Next (benchmarks)
}

func (f *fakeModel) Name() string  { return "fake" }
func (f *fakeModel) Model() string { return "fake-writer-1" }

func (f *fakeModel) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	start := time.Now()
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	answer, hold, started := f.answer, f.hold, f.started
	f.mu.Unlock()
	if answer == nil {
		answer = autoAnswer
	}
	if started != nil {
		started <- struct{}{}
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, &llm.Error{Code: llm.CodeStreamCut, Provider: "fake", Err: ctx.Err()}
		}
	}
	text := answer(req)
	f.mu.Lock()
	f.elapsed += time.Since(start)
	f.mu.Unlock()
	return &fakeStream{ctx: ctx, pieces: llmPieces(text), usage: llm.Usage{Input: llm.CountInput(req.Messages), Output: llm.CountTokens(text)}}, nil
}

func (f *fakeModel) requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]llm.Request(nil), f.reqs...)
}

func llmPieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(len(s), 16)
		for n < len(s) && !utf8Start(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

type fakeStream struct {
	ctx    context.Context
	pieces []string
	usage  llm.Usage
	done   bool
}

func (s *fakeStream) Next() (string, error) {
	if err := s.ctx.Err(); err != nil {
		return "", &llm.Error{Code: llm.CodeStreamCut, Provider: "fake", Err: err}
	}
	if len(s.pieces) == 0 {
		s.done = true
		return "", io.EOF
	}
	p := s.pieces[0]
	s.pieces = s.pieces[1:]
	return p, nil
}

func (s *fakeStream) Usage() (llm.Usage, bool) {
	u := s.usage
	u.Total = u.Input + u.Output
	return u, s.done
}
func (s *fakeStream) FinishReason() string { return "stop" }
func (s *fakeStream) Close() error         { return nil }

var scopeLine = regexp.MustCompile(`(?m)^Scope: (\S+)$`)

// requestContent returns the scope line and the content JSON of the
// request the service built.
func requestContent(req llm.Request) (string, map[string]json.RawMessage) {
	user := req.Messages[len(req.Messages)-1].Content
	scope := ""
	if m := scopeLine.FindStringSubmatch(user); m != nil {
		scope = m[1]
	}
	_, rest, _ := strings.Cut(user, "# Content in scope (FlowDocument JSON)\n")
	body, _, _ := strings.Cut(rest, "\n\nAnswer with the JSON object only.")
	var content map[string]json.RawMessage
	_ = json.Unmarshal([]byte(body), &content)
	return scope, content
}

// autoAnswer proposes a small valid edit for whatever scope it is asked:
// every text block's text gets " (edited)"; a selection becomes "EDITED".
func autoAnswer(req llm.Request) string {
	scope, content := requestContent(req)
	edit := func(bs []flowdoc.Block) []flowdoc.Block {
		out := make([]flowdoc.Block, len(bs))
		for i, b := range bs {
			out[i] = b.Clone()
			if b.Type.IsText() {
				out[i].RichText = []flowdoc.Run{{Text: flowdoc.PlainText(b.RichText) + " (edited)"}}
			}
		}
		return out
	}
	var op map[string]any
	switch {
	case strings.HasPrefix(scope, "selection:"):
		var id string
		var start, end int
		json.Unmarshal(content["blockId"], &id)
		json.Unmarshal(content["start"], &start)
		json.Unmarshal(content["end"], &end)
		op = map[string]any{"op": "replace_selection", "blockId": id, "start": start, "end": end, "richText": []any{map[string]any{"text": "EDITED"}}}
	case strings.HasPrefix(scope, "block:"):
		var b flowdoc.Block
		json.Unmarshal(content["block"], &b)
		op = map[string]any{"op": "replace_block", "blockId": b.ID, "block": edit([]flowdoc.Block{b})[0]}
	case strings.HasPrefix(scope, "section:"):
		var bs []flowdoc.Block
		json.Unmarshal(content["blocks"], &bs)
		op = map[string]any{"op": "replace_section", "blocks": edit(bs)}
	default:
		var d flowdoc.Document
		json.Unmarshal(content["document"], &d)
		d.Blocks = edit(d.Blocks)
		op = map[string]any{"op": "replace_document", "document": d}
	}
	b, _ := json.Marshal(map[string]any{"summary": "small edit", "ops": []any{op}})
	return string(b)
}

// world is a store with a repo, a runner, a gateway on a fake model and
// the service.
type world struct {
	tb     testing.TB
	dir    string
	db     *kv.DB
	repo   *repo.Repo
	runner *task.Runner
	ledger *quota.Ledger
	model  *fakeModel
	gw     *Gateway
	svc    *Service
	logs   *syncBuffer
	closed sync.Once

	// With worldOptions.persona: the persona service, its index and the
	// content service it reads sources from.
	personas *persona.Service
	idx      *index.Index
	content  *content.Sources
	pub      *publish.Store
}

type worldOptions struct {
	switches config.Assistant
	limits   quota.Limits
	provider llm.Provider // nil: the fake model
	noStart  bool         // leave the runner stopped
	taskOpts task.KindOptions
	dir      string // reuse a store
	persona  *persona.Switches
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newWorld(tb testing.TB, mods ...func(*worldOptions)) *world {
	tb.Helper()
	o := worldOptions{switches: config.DefaultAssistant(),
		taskOpts: task.KindOptions{MaxAttempts: 3, BackoffBase: time.Millisecond, BackoffCap: 5 * time.Millisecond}}
	for _, m := range mods {
		m(&o)
	}
	w := &world{tb: tb, dir: o.dir, model: &fakeModel{}, logs: &syncBuffer{}}
	ko := kv.Options{CacheSize: 4 << 20}
	if w.dir == "" {
		// A world of its own runs on the in-memory engine; one given a
		// data directory (restarts, crashes) on the disk.
		w.dir = tb.TempDir()
		ko.Engine = kv.EngineMemory
		ko = pgtest.Store(tb, w.dir, ko)
	}
	r, err := repo.Open(w.dir, repo.Options{KV: ko})
	if err != nil {
		tb.Fatal(err)
	}
	w.repo, w.db = r, r.DB()
	log := slog.New(slog.NewTextHandler(w.logs, nil))
	w.runner, err = task.Open(w.db, task.Options{Hub: r.Hub(), Concurrency: 4, Logger: log})
	if err != nil {
		tb.Fatal(err)
	}
	w.ledger = quota.NewLedger(w.db, quota.LedgerOptions{Logger: log})
	var p llm.Provider = w.model
	if o.provider != nil {
		p = o.provider
	}
	w.gw = New(map[quota.Category]Route{quota.Writing: {Provider: p, Policy: quota.NewPolicy(w.db, quota.Writing, o.limits, nil),
		Source: "dedicated", MaxOutputTokens: 2000}}, w.ledger, nil)
	opts := Options{Repo: r, Runner: w.runner, Gateway: w.gw, Ledger: w.ledger, Switches: o.switches, Task: o.taskOpts, Logger: log}
	if o.persona != nil {
		w.idx, err = index.Open(context.Background(), w.db, filepath.Join(w.dir, "index"), persona.IndexSource(), index.Options{Manual: true, Logger: log})
		if err != nil {
			tb.Fatal(err)
		}
		w.personas = persona.New(w.db, w.idx, *o.persona, persona.Options{Logger: log})
		w.pub = publish.New(r, nil)
		w.content = content.New(r, w.pub)
		opts.Personas, opts.References = w.personas, w.content
	}
	w.svc, err = NewService(context.Background(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	if !o.noStart {
		w.start()
	}
	tb.Cleanup(w.close)
	return w
}

func (w *world) start() {
	w.tb.Helper()
	if err := w.runner.Start(context.Background()); err != nil {
		w.tb.Fatal(err)
	}
}

func (w *world) close() {
	w.closed.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w.runner.Close(ctx)
		if w.idx != nil {
			w.idx.Close(ctx)
		}
		w.repo.Close()
	})
}

var (
	ctx     = context.Background()
	authorA = Actor{UserID: "u1authora", User: "author-a"}
	admin   = Actor{UserID: "u1admin", User: "admin", Admin: true}
)

func para(id, text string) flowdoc.Block {
	return flowdoc.Block{ID: id, Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: text}}}
}

// article creates a document of n paragraphs p1..pn plus, with code, a
// code block c1 after p1.
func (w *world) article(n int, code bool) string {
	w.tb.Helper()
	d := flowdoc.Document{SchemaVersion: 1}
	for i := 1; i <= n; i++ {
		d.Blocks = append(d.Blocks, para(fmt.Sprintf("p%d", i), fmt.Sprintf("Paragraph %d says something about 世界 and 🌍.", i)))
		if i == 1 && code {
			d.Blocks = append(d.Blocks, flowdoc.Block{ID: "c1", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Language: "go", Text: "fmt.Println(1)"}})
		}
	}
	v, err := w.repo.CreateDoc(ctx, repo.CreateParams{Owner: authorA.UserID, Attrs: flowdoc.Attributes{Title: "An article"}, Body: d})
	if err != nil {
		w.tb.Fatal(err)
	}
	return v.Doc
}

// assist makes a request and waits for its run to finish.
func (w *world) assist(req AssistRequest) (Queued, Run) {
	w.tb.Helper()
	q, err := w.svc.Assist(ctx, authorA, req)
	if err != nil {
		w.tb.Fatalf("Assist(%+v): %v", req, err)
	}
	return q, w.wait(q.Run.ID)
}

func (w *world) wait(run string) Run {
	w.tb.Helper()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	r, err := w.svc.WaitRun(c, run)
	if err != nil {
		w.tb.Fatalf("waiting for run %s: %v (state %s)", run, err, r.State)
	}
	return r
}

// suggest asks for a suggestion on scope and returns it (pending).
func (w *world) suggest(doc string, scope Scope) Suggestion {
	w.tb.Helper()
	_, run := w.assist(AssistRequest{Doc: doc, Scope: scope, Instruction: "tighten this"})
	if run.State != RunSucceeded || run.Suggestion == "" {
		w.tb.Fatalf("run %s: %s outcome %q error %+v", run.ID, run.State, run.Outcome, run.Error)
	}
	sg, err := w.svc.Suggestion(ctx, authorA, run.Suggestion)
	if err != nil {
		w.tb.Fatal(err)
	}
	return sg
}

func (w *world) suggestion(id string) Suggestion {
	w.tb.Helper()
	sg, err := w.svc.Suggestion(ctx, authorA, id)
	if err != nil {
		w.tb.Fatal(err)
	}
	return sg
}

// docEvents returns the types of doc's stream events after cursor.
func (w *world) docEvents(doc string, after uint64) []stream.Event {
	w.tb.Helper()
	evs, err := stream.Read(w.db, repo.Stream(doc), after, 0)
	if err != nil {
		w.tb.Fatal(err)
	}
	return evs
}

func (w *world) lastDocEvent(doc string) uint64 {
	n, err := stream.Last(w.db, repo.Stream(doc))
	if err != nil {
		w.tb.Fatal(err)
	}
	return n
}

func (w *world) save(doc string, blocks ...flowdoc.Block) repo.SaveResult {
	w.tb.Helper()
	dr, err := w.repo.Draft(ctx, doc)
	if err != nil {
		w.tb.Fatal(err)
	}
	var ch []repo.DraftChange
	for i := range blocks {
		ch = append(ch, repo.DraftChange{Op: repo.ChangeUpsert, Block: &blocks[i]})
	}
	res, err := w.repo.SaveDraft(ctx, repo.SaveParams{Doc: doc, Actor: "author-a", BaseSeq: dr.Seq, Changes: ch})
	if err != nil {
		w.tb.Fatal(err)
	}
	return res
}

func codeOf(err error) string {
	if err == nil {
		return ""
	}
	return errs.CodeOf(err)
}

func types(evs []stream.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

type llmRequest = llm.Request

func repoCreate(d flowdoc.Document) repo.CreateParams {
	return repo.CreateParams{Owner: authorA.UserID, Attrs: flowdoc.Attributes{Title: "Benchmark"}, Body: d}
}
