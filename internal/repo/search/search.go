package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/persona/index"
)

// Bounds of a query.
const (
	MaxQueryBytes = 1 << 10 // the query text
	DefaultLimit  = 20      // hits when a query sets none
	MaxLimit      = 200     // the largest limit accepted
)

// MappingVersion is the version of the index mapping and of what a
// document's entry holds. An index of another version is rebuilt at Open.
const MappingVersion = 1

// Field names of an indexed document.
const (
	fieldOwner = "owner"
	fieldTitle = "title"
	fieldBody  = "body"
	fieldTags  = "tags"
	fieldShown = "shown" // the stored title returned with a hit
	fieldSlug  = "slug"  // a public article's slug (stored)

	internalKey = "folio:mapping"
	currentFile = "CURRENT"
	applyBatch  = 500 // documents per index batch
	snippetLen  = 160 // bytes of body text around the first match
)

// Hit is one document a query found.
type Hit struct {
	ID    string  `json:"id"`
	Title string  `json:"title"`
	Score float64 `json:"score"`
	// Snippet is the body text around the first match, in pieces, the
	// matched words marked (empty when only the title or tags matched
	// and the body is empty).
	Snippet []Segment `json:"snippet"`
}

// PublicHit is one published public article a visitor's query found.
type PublicHit struct {
	Slug    string    `json:"slug"`
	Title   string    `json:"title"`
	Snippet []Segment `json:"snippet"`
}

// Segment is a piece of a snippet: Mark says it is a matched word.
type Segment struct {
	Text string `json:"text"`
	Mark bool   `json:"mark,omitempty"`
}

// Source is what the index projects: the repository (*repo.Repo) or
// the daemon's content service.
type Source interface {
	// ListDocs describes the documents of owner ("": all of them),
	// deleted ones excluded.
	ListDocs(ctx context.Context, owner string) ([]repo.DocInfo, error)
	// GetDoc describes one document; *repo.NotFoundError when it is
	// missing, deleted or purged.
	GetDoc(ctx context.Context, doc string) (repo.DocInfo, error)
	// Show materializes a version, or the draft (repo.DraftName).
	Show(ctx context.Context, doc, label string) (repo.Snapshot, error)
	// WatchEvents calls fn after every later commit that notifies stream
	// name (repo.OutboxStream) until stop is called.
	WatchEvents(name string, fn func()) (stop func())
	// DocChanges lists the pending outbox entries of document changes;
	// AckDocChanges deletes them once the index has their changes.
	DocChanges(ctx context.Context) ([]repo.DocChange, error)
	AckDocChanges(ctx context.Context, cs []repo.DocChange) error
}

// Public tells which documents visitors may find. The daemon's
// publishing store answers it (server.publicSource).
type Public interface {
	// PublicDoc returns what visitors see of doc, and false when they
	// may not find it: not published, not public (private, password),
	// deleted or missing.
	PublicDoc(ctx context.Context, doc string) (PublicDoc, bool, error)
}

// PublicDoc is a published public article as the public index holds it.
type PublicDoc struct {
	Slug  string
	Attrs flowdoc.Attributes // the published version's
	Body  flowdoc.Document   // the published version's
}

// Options tune Open.
type Options struct {
	// Dir is the index's directory beside the store; "" keeps the index
	// in memory (built from the source at Open).
	Dir string
	// Public, when set, makes a second index of the published public
	// articles for visitors (SearchPublic).
	Public Public
	// Manual turns off the background applier: entries are applied by
	// Drain and by the queries, which apply the entries this process
	// announced first (one-shot CLI commands, tests).
	Manual bool
	// Poll is how often the applier looks for entries nobody announced;
	// 0 means 2 s.
	Poll time.Duration
	// Settle is how long the applier lets announced entries gather
	// before it applies them, so that a document its editor saves every
	// second or so is indexed once per Settle rather than once per save
	// (each apply reads and indexes the whole document). Queries apply
	// the entries announced before them first, so nothing they answer
	// waits for it. 0 means 5 s.
	Settle time.Duration
	Logger *slog.Logger
}

// gen is one generation of the index: the owners' documents and the
// public articles, built together.
type gen struct {
	n   int // generation number (0: in memory)
	own bleve.Index
	pub bleve.Index // nil without Options.Public
}

func (g *gen) close() error {
	err := g.own.Close()
	if g.pub != nil {
		err = errors.Join(err, g.pub.Close())
	}
	return err
}

// Index is the document search index: a projection of the repository
// fed by its outbox (repo.OutboxDoc entries). It is safe for concurrent
// use.
type Index struct {
	src Source
	o   Options
	log *slog.Logger

	// applyMu serializes applying the outbox and rebuilding, so that no
	// entry is deleted while a rebuild reads the repository.
	applyMu sync.Mutex

	mu  sync.RWMutex // guards cur
	cur *gen         // nil once closed

	// announced counts the outbox notifications of this process;
	// applied is the count the last successful Drain started from. A
	// query applies the outbox first when they differ, so that it sees
	// every change acknowledged before it began.
	announced, applied atomic.Uint64

	stopWatch func()
	wake      chan struct{}
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// Open opens (or creates) the index of src: from
// o.Dir, rebuilt there when missing, unreadable or of another mapping
// version (in memory, built, when o.Dir is ""); then it applies the
// pending outbox entries, so that changes committed before a crash
// reach it. Unless o.Manual, a goroutine applies new entries until
// Close.
func Open(ctx context.Context, src Source, o Options) (*Index, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.Settle <= 0 {
		o.Settle = 5 * time.Second
	}
	x := &Index{src: src, o: o, log: o.Logger, wake: make(chan struct{}, 1)}
	// Watch before reading, so that no change slips between the two.
	x.stopWatch = src.WatchEvents(repo.OutboxStream, x.Notify)
	reason := "missing"
	if o.Dir != "" {
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			x.stopWatch()
			return nil, fmt.Errorf("search: create %s: %w", o.Dir, err)
		}
		reason = x.openCurrent()
	}
	if reason != "" {
		if o.Dir != "" {
			x.log.Info("search index: building", "dir", o.Dir, "reason", reason)
		}
		if err := x.Rebuild(ctx); err != nil {
			x.stopWatch()
			return nil, err
		}
	}
	x.removeStale()
	// Below the disk's reserve the entries cannot be deleted yet; the
	// index has their changes, and the applier deletes them later.
	if err := x.Drain(ctx); err != nil && !kv.BelowReserve(err) {
		x.Close(context.Background())
		return nil, err
	}
	if !o.Manual {
		bg, cancel := context.WithCancel(context.Background())
		x.cancel = cancel
		x.wg.Add(1)
		go x.run(bg)
	}
	return x, nil
}

func genName(n int) string { return fmt.Sprintf("gen-%06d", n) }

func parseGen(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "gen-")
	if !ok || len(s) != 6 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// openCurrent opens the generation CURRENT names and returns "" or why
// it must be rebuilt.
func (x *Index) openCurrent() string {
	data, err := os.ReadFile(filepath.Join(x.o.Dir, currentFile))
	if errors.Is(err, os.ErrNotExist) {
		return "missing"
	}
	if err != nil {
		return "unreadable CURRENT: " + err.Error()
	}
	name := strings.TrimSpace(string(data))
	n, ok := parseGen(name)
	if !ok {
		return fmt.Sprintf("corrupt CURRENT %q", name)
	}
	g := &gen{n: n}
	dir := filepath.Join(x.o.Dir, name)
	if g.own, err = bleve.Open(filepath.Join(dir, "own")); err != nil {
		x.cur = &gen{n: n} // the rebuild goes to the next generation
		return "corrupt: " + err.Error()
	}
	if v, err := g.own.GetInternal([]byte(internalKey)); err != nil || string(v) != strconv.Itoa(MappingVersion) {
		g.own.Close()
		x.cur = &gen{n: n}
		return fmt.Sprintf("mapping version %q, want %d", v, MappingVersion)
	}
	if x.o.Public != nil {
		if g.pub, err = bleve.Open(filepath.Join(dir, "pub")); err != nil {
			g.own.Close()
			x.cur = &gen{n: n}
			return "no public index: " + err.Error()
		}
	}
	x.cur = g
	return ""
}

// removeStale deletes generation directories other than the current one
// (left by a rebuild that crashed).
func (x *Index) removeStale() {
	if x.o.Dir == "" {
		return
	}
	ents, err := os.ReadDir(x.o.Dir)
	if err != nil {
		return
	}
	x.mu.RLock()
	cur := genName(x.cur.n)
	x.mu.RUnlock()
	for _, e := range ents {
		if _, ok := parseGen(e.Name()); ok && e.Name() != cur {
			os.RemoveAll(filepath.Join(x.o.Dir, e.Name()))
		}
	}
}

func newMapping(public bool) (mapping.IndexMapping, error) {
	im := bleve.NewIndexMapping()
	if err := index.AddCJKAnalyzer(im); err != nil {
		return nil, err
	}
	kw := bleve.NewKeywordFieldMapping()
	kw.Store, kw.IncludeInAll, kw.IncludeTermVectors = false, false, false
	text := bleve.NewTextFieldMapping()
	text.Analyzer = index.AnalyzerCJK
	text.Store, text.IncludeInAll, text.IncludeTermVectors = false, false, false
	// The body is stored with its term vectors: a hit's snippet is cut
	// from it around the matches' offsets.
	body := bleve.NewTextFieldMapping()
	body.Analyzer = index.AnalyzerCJK
	body.Store, body.IncludeInAll, body.IncludeTermVectors = true, false, true
	stored := bleve.NewKeywordFieldMapping()
	stored.Index, stored.IncludeInAll = false, false
	dm := bleve.NewDocumentStaticMapping()
	if !public {
		dm.AddFieldMappingsAt(fieldOwner, kw)
	} else {
		dm.AddFieldMappingsAt(fieldSlug, stored)
	}
	dm.AddFieldMappingsAt(fieldTitle, text)
	dm.AddFieldMappingsAt(fieldTags, text)
	dm.AddFieldMappingsAt(fieldBody, body)
	dm.AddFieldMappingsAt(fieldShown, stored)
	im.DefaultMapping = dm
	im.DefaultAnalyzer = index.AnalyzerCJK
	im.StoreDynamic, im.IndexDynamic = false, false
	return im, nil
}

// create makes an empty index in dir ("" in memory). Batches are safe
// (never scorch's unsafe_batch): Batch returns once the segment is
// persisted, so an outbox entry is deleted only after its change is.
func create(dir string, public bool) (bleve.Index, error) {
	m, err := newMapping(public)
	if err != nil {
		return nil, fmt.Errorf("search: mapping: %w", err)
	}
	if dir == "" {
		return bleve.NewMemOnly(m)
	}
	idx, err := bleve.NewUsing(dir, m, scorch.Name, scorch.Name, map[string]any{"unsafe_batch": false})
	if err != nil {
		return nil, fmt.Errorf("search: create %s: %w", dir, err)
	}
	return idx, nil
}

// Rebuild makes a new generation from every document of the source and
// swaps it in (on disk: CURRENT replaced durably, the old directory
// removed). Queries answer from the old one until the swap. The outbox
// entries pending when it starts are covered by what it reads and are
// deleted after the swap; those committed meanwhile stay and are applied
// after.
func (x *Index) Rebuild(ctx context.Context) error {
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	x.mu.RLock()
	next := 1
	if x.cur != nil {
		next = x.cur.n + 1
	}
	x.mu.RUnlock()
	g := &gen{}
	dir := ""
	if x.o.Dir != "" {
		g.n = next
		dir = filepath.Join(x.o.Dir, genName(next))
		if err := os.RemoveAll(dir); err != nil { // a crashed rebuild's
			return fmt.Errorf("search: remove %s: %w", dir, err)
		}
	}
	sub := func(name string) string {
		if dir == "" {
			return ""
		}
		return filepath.Join(dir, name)
	}
	var covered []repo.DocChange
	err := func() (err error) {
		// Listed before the documents are read: each change these name
		// committed before the reads, which see it.
		if covered, err = x.src.DocChanges(ctx); err != nil {
			return err
		}
		if g.own, err = create(sub("own"), false); err != nil {
			return err
		}
		if x.o.Public != nil {
			if g.pub, err = create(sub("pub"), true); err != nil {
				return err
			}
		}
		docs, err := x.src.ListDocs(ctx, "")
		if err != nil {
			return err
		}
		ids := make([]string, len(docs))
		for i, d := range docs {
			ids[i] = d.ID
		}
		if err := x.apply(ctx, g, ids); err != nil {
			return err
		}
		b := g.own.NewBatch()
		b.SetInternal([]byte(internalKey), []byte(strconv.Itoa(MappingVersion)))
		if err := g.own.Batch(b); err != nil {
			return err
		}
		if dir != "" {
			return kv.WriteFileSync(filepath.Join(x.o.Dir, currentFile), []byte(genName(next)+"\n"))
		}
		return nil
	}()
	if err != nil {
		if g.own != nil {
			g.close()
		}
		if dir != "" {
			os.RemoveAll(dir)
		}
		return fmt.Errorf("search: rebuild: %w", err)
	}
	x.mu.Lock()
	old := x.cur
	x.cur = g
	x.mu.Unlock()
	if old != nil && old.own != nil {
		old.close()
		if dir != "" {
			os.RemoveAll(filepath.Join(x.o.Dir, genName(old.n)))
		}
	}
	// Below the disk's reserve they stay, and are applied again: harmless.
	if err := x.src.AckDocChanges(ctx, covered); err != nil && !kv.BelowReserve(err) {
		return err
	}
	return nil
}

// apply reconciles g with the stored state of docs: each is indexed as
// it is now, or dropped when it is gone or deleted (and from the public
// index when visitors may not find it).
func (x *Index) apply(ctx context.Context, g *gen, docs []string) error {
	own := g.own.NewBatch()
	var pub *bleve.Batch
	if g.pub != nil {
		pub = g.pub.NewBatch()
	}
	flush := func(force bool) error {
		if force || own.Size() >= applyBatch {
			if err := g.own.Batch(own); err != nil {
				return err
			}
			own.Reset()
		}
		if pub != nil && (force || pub.Size() >= applyBatch) {
			if err := g.pub.Batch(pub); err != nil {
				return err
			}
			pub.Reset()
		}
		return nil
	}
	for _, doc := range docs {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := x.ownFields(ctx, doc)
		switch {
		case errors.Is(err, repo.ErrNotFound):
			own.Delete(doc)
		case err != nil:
			return fmt.Errorf("document %s: %w", doc, err)
		default:
			if err := own.Index(doc, f); err != nil {
				return err
			}
		}
		if pub != nil {
			pd, ok, err := x.o.Public.PublicDoc(ctx, doc)
			switch {
			case err != nil && !errors.Is(err, repo.ErrNotFound):
				return fmt.Errorf("document %s: %w", doc, err)
			case err != nil || !ok:
				pub.Delete(doc)
			default:
				if err := pub.Index(doc, publicFields(pd)); err != nil {
					return err
				}
			}
		}
		if err := flush(false); err != nil {
			return err
		}
	}
	return flush(true)
}

// ownFields is the indexed form of doc for its owner: the draft's and
// the head's title, text and tags.
func (x *Index) ownFields(ctx context.Context, doc string) (map[string]any, error) {
	d, err := x.src.GetDoc(ctx, doc)
	if err != nil {
		return nil, err
	}
	draft, err := x.src.Show(ctx, doc, repo.DraftName)
	if err != nil {
		return nil, err
	}
	head, err := x.src.Show(ctx, doc, d.Head)
	if err != nil {
		return nil, err
	}
	join := func(a, b string) string {
		if a == b {
			return a
		}
		return a + "\n" + b
	}
	tags := strings.Join(draft.Attrs.Tags, "\n") + "\n" + strings.Join(head.Attrs.Tags, "\n")
	return map[string]any{
		fieldOwner: d.Owner,
		fieldTitle: join(draft.Attrs.Title, head.Attrs.Title),
		fieldBody:  join(draft.Body.Text(), head.Body.Text()),
		fieldTags:  tags,
		fieldShown: draft.Attrs.Title,
	}, nil
}

func publicFields(pd PublicDoc) map[string]any {
	return map[string]any{
		fieldSlug:  pd.Slug,
		fieldTitle: pd.Attrs.Title,
		fieldBody:  pd.Body.Text(),
		fieldTags:  strings.Join(pd.Attrs.Tags, "\n"),
		fieldShown: pd.Attrs.Title,
	}
}

// Notify wakes the applier after a commit that wrote outbox entries (the
// repository announces them on repo.OutboxStream). It returns at once.
func (x *Index) Notify() {
	x.announced.Add(1)
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

func (x *Index) run(ctx context.Context) {
	defer x.wg.Done()
	t := time.NewTicker(x.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-x.wake:
			// Let the entries of the next saves gather (later wakes
			// stay queued in x.wake and find little or nothing).
			select {
			case <-ctx.Done():
				return
			case <-time.After(x.o.Settle):
			}
		case <-t.C:
			if len(x.wake) > 0 {
				continue // an announcement is queued: its entries wait for their Settle
			}
		}
		if err := x.Drain(ctx); err != nil && ctx.Err() == nil && !kv.BelowReserve(err) {
			x.log.Error("search index: applying the outbox failed; will retry", "err", err)
		}
	}
}

// testAfterApply, when set by a test, runs after the index has the
// changes of a drain and before its outbox entries are deleted.
var testAfterApply func()

// Drain applies every pending repo.OutboxDoc entry and deletes the
// entries once the index has their changes (persisted, on disk). A crash
// at any point leaves the entries, which the next Open applies again:
// an entry means "reconcile this document", so applying it twice is
// harmless.
func (x *Index) Drain(ctx context.Context) error {
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	start := x.announced.Load()
	x.mu.RLock()
	g := x.cur
	x.mu.RUnlock()
	if g == nil || g.own == nil {
		return errs.E(errs.Unavailable, "search: the index is closed")
	}
	cs, err := x.src.DocChanges(ctx)
	if err != nil {
		return err
	}
	if len(cs) > 0 {
		var docs []string
		seen := map[string]bool{}
		for _, c := range cs {
			if !seen[c.Doc] {
				seen[c.Doc] = true
				docs = append(docs, c.Doc)
			}
		}
		if err := x.apply(ctx, g, docs); err != nil {
			return fmt.Errorf("search: apply the outbox: %w", err)
		}
		if testAfterApply != nil {
			testAfterApply()
		}
		if err := x.src.AckDocChanges(ctx, cs); err != nil {
			return err
		}
	}
	for {
		a := x.applied.Load()
		if a >= start || x.applied.CompareAndSwap(a, start) {
			return nil
		}
	}
}

// catchUp applies the outbox entries this process announced and the
// index has not applied yet: none, usually, since the applier runs at
// each announcement, so a query costs no read of the store.
func (x *Index) catchUp(ctx context.Context) error {
	if x.announced.Load() == x.applied.Load() {
		return nil
	}
	if err := x.Drain(ctx); err != nil && !kv.BelowReserve(err) {
		return err
	}
	return nil
}

// Pending counts the outbox entries the index has not applied yet.
func (x *Index) Pending(ctx context.Context) (int, error) {
	cs, err := x.src.DocChanges(ctx)
	return len(cs), err
}

func checkQuery(text string, limit int) (string, int, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return "", 0, errs.E(errs.Invalid, "search: the query is empty; give the words to look for")
	case len(text) > MaxQueryBytes:
		return "", 0, errs.E(errs.Invalid, "search: the query is %d bytes, over the limit of %d; shorten it", len(text), MaxQueryBytes)
	case !utf8.ValidString(text):
		return "", 0, errs.E(errs.Invalid, "search: the query is not valid UTF-8")
	case limit < 0 || limit > MaxLimit:
		return "", 0, errs.E(errs.Invalid, "search: limit %d is out of range; give 1 to %d", limit, MaxLimit)
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	return text, limit, nil
}

// words is the query's text part: each word must match somewhere; a
// word matches the title, body or tags (its CJK bigrams and unigrams
// all in one field).
func words(text string) []query.Query {
	var out []query.Query
	for _, w := range strings.Fields(text) {
		var any []query.Query
		for _, f := range []string{fieldTitle, fieldBody, fieldTags} {
			mq := query.NewMatchQuery(w)
			mq.SetField(f)
			mq.Analyzer = index.AnalyzerCJK
			mq.SetOperator(query.MatchQueryOperatorAnd)
			if f == fieldTitle {
				mq.SetBoost(3)
			} else if f == fieldTags {
				mq.SetBoost(2)
			}
			any = append(any, mq)
		}
		out = append(out, query.NewDisjunctionQuery(any))
	}
	return out
}

// current returns the open generation.
func (x *Index) current() (*gen, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.cur == nil || x.cur.own == nil {
		return nil, errs.E(errs.Unavailable, "search: the index is closed")
	}
	return x.cur, nil
}

// run searches idx with q, best first (ties by id).
func runQuery(ctx context.Context, idx bleve.Index, q query.Query, limit int, fields ...string) ([]*searchHit, error) {
	req := bleve.NewSearchRequestOptions(q, limit, 0, false)
	req.Fields = append([]string{fieldShown, fieldBody}, fields...)
	req.IncludeLocations = true
	res, err := idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, err
	}
	out := make([]*searchHit, 0, len(res.Hits))
	for _, h := range res.Hits {
		sh := &searchHit{id: h.ID, score: h.Score, fields: h.Fields}
		sh.title, _ = h.Fields[fieldShown].(string)
		body, _ := h.Fields[fieldBody].(string)
		sh.snippet = snippet(body, h.Locations[fieldBody])
		out = append(out, sh)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id < out[j].id
	})
	return out, nil
}

type searchHit struct {
	id, title string
	score     float64
	snippet   []Segment
	fields    map[string]any
}

// Search returns owner's documents that match text, best first (ties by
// id), at most limit of them (0: DefaultLimit). Every word of text must
// occur in the title, the body or the tags. It sees every change this
// process acknowledged before it began.
func (x *Index) Search(ctx context.Context, owner, text string, limit int) ([]Hit, error) {
	text, limit, err := checkQuery(text, limit)
	if err != nil {
		return nil, err
	}
	if owner == "" {
		return nil, errs.E(errs.Invalid, "search: no owner; a search covers one user's documents")
	}
	if err := x.catchUp(ctx); err != nil {
		return nil, err
	}
	g, err := x.current()
	if err != nil {
		return nil, err
	}
	own := query.NewTermQuery(owner)
	own.SetField(fieldOwner)
	q := query.NewConjunctionQuery(append([]query.Query{own}, words(text)...))
	hs, err := runQuery(ctx, g.own, q, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Hit, len(hs))
	for i, h := range hs {
		out[i] = Hit{ID: h.id, Title: h.title, Score: h.score, Snippet: h.snippet}
	}
	return out, nil
}

// SearchPublic returns the published public articles that match text,
// best first, at most limit (0: DefaultLimit). Only what visitors may
// find is in the public index, so what it answers depends on nothing
// else. errs.Unsupported when the index has no public part.
func (x *Index) SearchPublic(ctx context.Context, text string, limit int) ([]PublicHit, error) {
	text, limit, err := checkQuery(text, limit)
	if err != nil {
		return nil, err
	}
	if err := x.catchUp(ctx); err != nil {
		return nil, err
	}
	g, err := x.current()
	if err != nil {
		return nil, err
	}
	if g.pub == nil {
		return nil, errs.E(errs.Unsupported, "search: this index has no public articles")
	}
	hs, err := runQuery(ctx, g.pub, query.NewConjunctionQuery(words(text)), limit, fieldSlug)
	if err != nil {
		return nil, err
	}
	out := make([]PublicHit, len(hs))
	for i, h := range hs {
		slug, _ := h.fields[fieldSlug].(string)
		out[i] = PublicHit{Slug: slug, Title: h.title, Snippet: h.snippet}
	}
	return out, nil
}

// Close stops the applier and closes the index.
func (x *Index) Close(ctx context.Context) error {
	if x.stopWatch != nil {
		x.stopWatch()
	}
	if x.cancel != nil {
		x.cancel()
	}
	done := make(chan struct{})
	go func() { x.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.cur == nil || x.cur.own == nil {
		x.cur = nil
		return nil
	}
	err := x.cur.close()
	x.cur = nil
	return err
}
