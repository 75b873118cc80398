package index

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
)

// MappingVersion is the version of the index mapping and analysis. An
// index built with another version is rebuilt at Open.
const MappingVersion = 1

// Outbox entry kinds this package applies.
const KindMemorySnapshot = "persona.memory"

// Field names of an index document.
const (
	fieldUser     = "user"
	fieldPersona  = "persona"
	fieldSnapshot = "snapshot"
	fieldStatus   = "status"
	fieldSoleDoc  = "soledoc"
	fieldText     = "text"
	fieldConf     = "conf"
	fieldEvidence = "evn"
	fieldChars    = "chars"
	fieldKey      = "key"
	analyzerCJK   = "folio_cjk"
	filterBigram  = "folio_cjk_bigram_unigram"
	internalKey   = "folio:mapping"
	reasonKey     = "folio:built" // why the generation was built
	currentFile   = "CURRENT"
	applyBatch    = 500 // documents per index batch
)

// ErrUnavailable is returned by Search while no index is open (a rebuild
// of a missing index is running).
var ErrUnavailable = errs.E(errs.Unavailable, "index: the memory index is being rebuilt; retry shortly")

// Doc is one memory item as the index holds it.
type Doc struct {
	Key        string  // item key
	User       string  // owner
	Persona    string  // persona id
	Snapshot   string  // snapshot id
	Status     string  // supported, conflicted, restricted
	Text       string  // searchable text
	Confidence float64 // 0..1
	Evidence   int     // evidence count
	// SoleDoc is the document of the item's evidence when all of it is
	// from one document, "" otherwise: a query excludes the items whose
	// only evidence is the article being written.
	SoleDoc string
	Chars   int // length of the statement in code points (the character budget)
}

// Source reads what the index projects. The persona store implements it.
type Source interface {
	// Snapshot calls fn for each item of snapshot id as stored in r, and
	// reports whether the snapshot exists.
	Snapshot(r kv.Reader, id string, fn func(Doc) error) (bool, error)
	// Snapshots calls fn with the id of every stored snapshot.
	Snapshots(r kv.Reader, fn func(id string) error) error
}

// Entry is an outbox entry: "reconcile the index with the stored state
// of this snapshot". Entries are idempotent and independent of order.
type Entry struct {
	Kind string `msgpack:"k"`
	ID   string `msgpack:"id"`
}

// Enqueue adds to b an outbox entry for snapshot id; b must also hold the
// snapshot's facts (or their deletion), so both commit together.
func Enqueue(db *kv.DB, b *kv.Batch, snapshot string) error {
	k, err := db.OutboxKey()
	if err != nil {
		return err
	}
	v, err := kv.Marshal(Entry{Kind: KindMemorySnapshot, ID: snapshot})
	if err != nil {
		return err
	}
	return b.Set(k, v)
}

// Options tune Open.
type Options struct {
	// Manual turns off the background applier: entries are applied by
	// Drain only (tests, the crash harness, one-shot CLI commands).
	Manual bool
	// Poll is how often the applier looks for entries nobody announced
	// (Notify); 0 means 2 s.
	Poll   time.Duration
	Logger *slog.Logger
}

// Index is the memory search index: one scorch index in a directory
// beside the Pebble store, a projection of the memory snapshots. It is
// safe for concurrent use.
type Index struct {
	db   *kv.DB
	root string
	src  Source
	log  *slog.Logger

	// applyMu serializes applying the outbox and rebuilding, so that no
	// entry is deleted while a rebuild reads the store.
	applyMu sync.Mutex

	// mu guards idx, gen and the status fields below.
	mu         sync.RWMutex
	idx        bleve.Index // nil while a missing index is rebuilt
	gen        int
	rebuilding bool
	lastReason string // why the last rebuild ran
	lastErr    string // the applier's last error, "" after a success

	wake   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Open opens (or creates) the index in directory root, rebuilding it into
// a new directory when it is missing, unreadable or of another mapping
// version, then replays the outbox. Unless o.Manual, a goroutine applies
// new entries until Close.
func Open(ctx context.Context, db *kv.DB, root string, src Source, o Options) (*Index, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("index: create %s: %w", root, err)
	}
	x := &Index{db: db, root: root, src: src, log: o.Logger, wake: make(chan struct{}, 1)}
	reason := x.openCurrent()
	if reason != "" {
		if reason == "missing" {
			x.log.Info("memory index: building", "dir", root, "reason", reason)
		} else {
			x.log.Warn("memory index: rebuilding", "dir", root, "reason", reason)
		}
		if err := x.Rebuild(ctx, reason); err != nil {
			return nil, err
		}
	}
	x.removeStale()
	// Below the disk's reserve the outbox entries cannot be deleted yet:
	// the applier goroutine applies them once writes resume.
	if err := x.Drain(ctx); err != nil && !kv.BelowReserve(err) {
		x.Close(context.Background())
		return nil, err
	}
	if !o.Manual {
		bg, cancel := context.WithCancel(context.Background())
		x.cancel = cancel
		x.wg.Add(1)
		go x.run(bg, o.Poll)
	}
	return x, nil
}

// openCurrent opens the generation named by CURRENT and returns "" or
// the reason it must be rebuilt.
func (x *Index) openCurrent() string {
	data, err := os.ReadFile(filepath.Join(x.root, currentFile))
	if errors.Is(err, os.ErrNotExist) {
		return "missing"
	}
	if err != nil {
		return "unreadable CURRENT: " + err.Error()
	}
	name := strings.TrimSpace(string(data))
	gen, ok := parseGen(name)
	if !ok {
		return fmt.Sprintf("corrupt CURRENT %q", name)
	}
	x.gen = gen // a rebuild goes to the next generation
	idx, err := bleve.Open(filepath.Join(x.root, name))
	if err != nil {
		return "corrupt: " + err.Error()
	}
	v, err := idx.GetInternal([]byte(internalKey))
	if err != nil || string(v) != strconv.Itoa(MappingVersion) {
		idx.Close()
		return fmt.Sprintf("mapping version %q, want %d", v, MappingVersion)
	}
	x.idx = idx
	// Why this generation was built, so that Status says it in every
	// process that opens it.
	if r, err := idx.GetInternal([]byte(reasonKey)); err == nil {
		x.lastReason = string(r)
	}
	return ""
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

// removeStale deletes generation directories other than the current one
// (left by a rebuild that crashed or by a swap).
func (x *Index) removeStale() {
	ents, err := os.ReadDir(x.root)
	if err != nil {
		return
	}
	x.mu.RLock()
	cur := genName(x.gen)
	x.mu.RUnlock()
	for _, e := range ents {
		if _, ok := parseGen(e.Name()); ok && e.Name() != cur {
			os.RemoveAll(filepath.Join(x.root, e.Name()))
		}
	}
}

// AnalyzerCJK is the name of the analyzer AddCJKAnalyzer registers.
const AnalyzerCJK = analyzerCJK

// AddCJKAnalyzer registers on im the CJK-aware text analyzer (named
// AnalyzerCJK) the memory index uses, so that other indexes (document
// search) analyze text the same way: Unicode word segmentation, width
// folding, lower case, and bigrams AND unigrams of CJK runs (bigrams rank
// phrases, unigrams let a one-character query such as 京 match).
func AddCJKAnalyzer(im *mapping.IndexMappingImpl) error {
	if err := im.AddCustomTokenFilter(filterBigram, map[string]any{"type": cjk.BigramName, "output_unigram": true}); err != nil {
		return err
	}
	return im.AddCustomAnalyzer(analyzerCJK, map[string]any{"type": custom.Name, "tokenizer": unicode.Name,
		"token_filters": []any{cjk.WidthName, lowercase.Name, filterBigram}})
}

// newMapping is the index mapping: exact keyword fields for the filter,
// the CJK-aware analyzer for the text.
func newMapping() (mapping.IndexMapping, error) {
	im := bleve.NewIndexMapping()
	if err := AddCJKAnalyzer(im); err != nil {
		return nil, err
	}
	kw := bleve.NewKeywordFieldMapping()
	kw.Store, kw.IncludeInAll, kw.IncludeTermVectors = false, false, false
	text := bleve.NewTextFieldMapping()
	text.Analyzer = analyzerCJK
	text.Store, text.IncludeInAll, text.IncludeTermVectors = false, false, false
	num := bleve.NewNumericFieldMapping()
	num.Index, num.IncludeInAll = false, false
	stored := bleve.NewKeywordFieldMapping()
	stored.Index, stored.IncludeInAll = false, false
	dm := bleve.NewDocumentStaticMapping()
	for _, f := range []string{fieldUser, fieldPersona, fieldSnapshot, fieldStatus, fieldSoleDoc} {
		dm.AddFieldMappingsAt(f, kw)
	}
	dm.AddFieldMappingsAt(fieldText, text)
	dm.AddFieldMappingsAt(fieldConf, num)
	dm.AddFieldMappingsAt(fieldEvidence, num)
	dm.AddFieldMappingsAt(fieldChars, num)
	dm.AddFieldMappingsAt(fieldKey, stored)
	im.DefaultMapping = dm
	im.DefaultAnalyzer = analyzerCJK
	im.StoreDynamic, im.IndexDynamic = false, false
	return im, nil
}

func docID(snapshot, key string) string { return snapshot + "/" + key }

func fields(d Doc) map[string]any {
	return map[string]any{fieldUser: d.User, fieldPersona: d.Persona, fieldSnapshot: d.Snapshot, fieldStatus: d.Status,
		fieldSoleDoc: d.SoleDoc, fieldText: d.Text, fieldConf: d.Confidence, fieldEvidence: float64(d.Evidence),
		fieldChars: float64(d.Chars), fieldKey: d.Key}
}

// create makes an empty index of the current mapping in dir. Batches are
// safe (never scorch's unsafe_batch): Batch returns once the segment is
// persisted.
func create(dir string) (bleve.Index, error) {
	m, err := newMapping()
	if err != nil {
		return nil, fmt.Errorf("index: mapping: %w", err)
	}
	idx, err := bleve.NewUsing(dir, m, scorch.Name, scorch.Name, map[string]any{"unsafe_batch": false})
	if err != nil {
		return nil, fmt.Errorf("index: create %s: %w", dir, err)
	}
	return idx, nil
}

// Rebuild builds a new index generation from the store in a new
// directory, makes it current (CURRENT replaced durably) and removes the
// old one. Searches keep using the old index until the swap; the outbox
// is not applied meanwhile and is replayed after.
func (x *Index) Rebuild(ctx context.Context, reason string) error {
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	x.mu.Lock()
	x.rebuilding = true
	next := x.gen + 1
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		x.rebuilding = false
		x.mu.Unlock()
	}()
	// A crashed rebuild may have left this generation behind; so may a
	// failed swap. Start afresh.
	for {
		dir := filepath.Join(x.root, genName(next))
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			break
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("index: remove %s: %w", dir, err)
		}
	}
	dir := filepath.Join(x.root, genName(next))
	idx, err := create(dir)
	if err != nil {
		return err
	}
	snap := x.db.NewSnapshot()
	err = x.fill(ctx, snap, idx)
	snap.Close()
	if err == nil {
		b := idx.NewBatch()
		b.SetInternal([]byte(internalKey), []byte(strconv.Itoa(MappingVersion)))
		b.SetInternal([]byte(reasonKey), []byte(reason))
		err = idx.Batch(b)
	}
	if err == nil {
		err = kv.WriteFileSync(filepath.Join(x.root, currentFile), []byte(genName(next)+"\n"))
	}
	if err != nil {
		idx.Close()
		os.RemoveAll(dir)
		return fmt.Errorf("index: rebuild: %w", err)
	}
	x.mu.Lock()
	old, oldGen := x.idx, x.gen
	x.idx, x.gen, x.lastReason = idx, next, reason
	x.mu.Unlock()
	if old != nil {
		old.Close()
		os.RemoveAll(filepath.Join(x.root, genName(oldGen)))
	}
	return nil
}

// fill indexes every snapshot of r into idx.
func (x *Index) fill(ctx context.Context, r kv.Reader, idx bleve.Index) error {
	return x.src.Snapshots(r, func(id string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := x.indexSnapshot(idx, r, id)
		return err
	})
}

// indexSnapshot adds the items of snapshot id to idx, in batches.
func (x *Index) indexSnapshot(idx bleve.Index, r kv.Reader, id string) (bool, error) {
	b := idx.NewBatch()
	ok, err := x.src.Snapshot(r, id, func(d Doc) error {
		if err := b.Index(docID(id, d.Key), fields(d)); err != nil {
			return err
		}
		if b.Size() >= applyBatch {
			if err := idx.Batch(b); err != nil {
				return err
			}
			b.Reset()
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	if b.Size() > 0 {
		if err := idx.Batch(b); err != nil {
			return false, err
		}
	}
	return ok, nil
}

// dropSnapshot deletes every document of snapshot id from idx.
func dropSnapshot(idx bleve.Index, id string) error {
	for {
		q := bleve.NewTermQuery(id)
		q.SetField(fieldSnapshot)
		req := bleve.NewSearchRequestOptions(q, applyBatch, 0, false)
		res, err := idx.Search(req)
		if err != nil {
			return err
		}
		if len(res.Hits) == 0 {
			return nil
		}
		b := idx.NewBatch()
		for _, h := range res.Hits {
			b.Delete(h.ID)
		}
		if err := idx.Batch(b); err != nil {
			return err
		}
	}
}

// testAfterApply, when set by a test, runs after a snapshot's changes
// are committed to the index and before its outbox entry is deleted.
var testAfterApply func(snapshot string)

// Notify wakes the applier after a commit that wrote outbox entries.
func (x *Index) Notify() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

func (x *Index) run(ctx context.Context, poll time.Duration) {
	defer x.wg.Done()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-x.wake:
		case <-t.C:
		}
		// Below the disk's reserve the daemon has said so once; the
		// applier retries quietly until writes resume.
		if err := x.Drain(ctx); err != nil && ctx.Err() == nil && !kv.BelowReserve(err) {
			x.log.Error("memory index: applying the outbox failed; will retry", "err", err)
		}
	}
}

// Drain applies every pending outbox entry of this package's kinds and
// deletes each one after its changes are committed to the index. A crash
// at any point leaves the entry, which is applied again (entries are
// idempotent).
func (x *Index) Drain(ctx context.Context) error {
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	x.mu.RLock()
	idx := x.idx
	x.mu.RUnlock()
	if idx == nil {
		return ErrUnavailable
	}
	p := []byte(kv.PrefixOutbox)
	it, err := x.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return err
	}
	type pending struct {
		key []byte
		e   Entry
	}
	var todo []pending
	for it.First(); it.Valid(); it.Next() {
		var e Entry
		if err := kv.Unmarshal(it.Value(), &e); err != nil {
			it.Close()
			return errs.E(errs.Corrupt, "index: outbox entry %x: %w", it.Key(), err)
		}
		if e.Kind == KindMemorySnapshot {
			todo = append(todo, pending{append([]byte(nil), it.Key()...), e})
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	done := map[string]bool{}
	for _, p := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !done[p.e.ID] {
			ok, err := x.indexSnapshot(idx, x.db, p.e.ID)
			if err == nil && !ok {
				err = dropSnapshot(idx, p.e.ID)
			}
			if err != nil {
				x.setErr(err)
				return fmt.Errorf("index: apply snapshot %s: %w", p.e.ID, err)
			}
			done[p.e.ID] = true
			if testAfterApply != nil {
				testAfterApply(p.e.ID)
			}
		}
		if err := x.db.Delete(p.key, kv.NoSync); err != nil {
			return err
		}
	}
	x.setErr(nil)
	return nil
}

func (x *Index) setErr(err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err == nil {
		x.lastErr = ""
	} else {
		x.lastErr = err.Error()
	}
}

// Status is what `folio index status` prints.
type Status struct {
	Dir        string `json:"dir"`
	Generation int    `json:"generation"`
	Mapping    int    `json:"mapping"`
	Docs       uint64 `json:"docs"`
	Pending    int    `json:"pending"` // this index's outbox entries not yet applied
	Rebuilding bool   `json:"rebuilding"`
	LastReason string `json:"lastRebuildReason,omitempty"`
	LastError  string `json:"lastError,omitempty"`
}

// Status reports the index's state.
func (x *Index) Status(ctx context.Context) (Status, error) {
	x.mu.RLock()
	st := Status{Dir: filepath.Join(x.root, genName(x.gen)), Generation: x.gen, Mapping: MappingVersion,
		Rebuilding: x.rebuilding, LastReason: x.lastReason, LastError: x.lastErr}
	idx := x.idx
	x.mu.RUnlock()
	if idx != nil {
		n, err := idx.DocCount()
		if err != nil {
			return st, err
		}
		st.Docs = n
	}
	p := []byte(kv.PrefixOutbox)
	it, err := x.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return st, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		// Other indexes' entries (the document search's) are theirs.
		var e Entry
		if kv.Unmarshal(it.Value(), &e) == nil && e.Kind == KindMemorySnapshot {
			st.Pending++
		}
	}
	return st, it.Error()
}

// Close stops the applier and closes the index.
func (x *Index) Close(ctx context.Context) error {
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
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx == nil {
		return nil
	}
	err := x.idx.Close()
	x.idx = nil
	return err
}
