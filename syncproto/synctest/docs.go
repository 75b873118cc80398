package synctest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/syncproto"
)

// Docs is an in-memory repository that keeps the repo contract the sync
// server relies on: per-block seqs, a conflict when a touched block
// changed since the save's baseSeq, validation before anything is
// stored, checkpoints that seal only an unsealed draft, recovery
// checkpoints for drafts left unsealed by an earlier process (see
// Restart), and "doc:<id>" stream events in a real Pebble store (in
// memory) with a stream.Hub.
type Docs struct {
	db  *pebble.DB
	hub *stream.Hub

	mu    sync.Mutex // guards docs, epoch; serializes every change
	docs  map[string]*doc
	epoch int // bumped by Restart
}

type doc struct {
	owner         string
	seq           uint64
	blocks        []fblock
	tomb          map[string]uint64 // deleted block id -> seq of the deletion
	attrs         flowdoc.Attributes
	unsealed      bool
	unsealedSince int64
	lastChange    int64
	epoch         int // process epoch of the last save
	versions      []version
}

type fblock struct {
	b   flowdoc.Block
	seq uint64
}

type version struct {
	info repo.VersionInfo
	body flowdoc.Document
}

var _ syncproto.Docs = (*Docs)(nil)

// NewDocs returns an empty repository with its own in-memory event store.
func NewDocs() (*Docs, error) {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		return nil, fmt.Errorf("synctest: open event store: %w", err)
	}
	return &Docs{db: db, hub: stream.NewHub(), docs: map[string]*doc{}}, nil
}

// Close closes the event store.
func (d *Docs) Close() error { return d.db.Close() }

// Events returns the stream reader the server uses.
func (d *Docs) Events() syncproto.Events { return syncproto.StoreEvents{Store: d.db, Hub: d.hub} }

// Owner returns the owner of doc ("" when it does not exist).
func (d *Docs) Owner(id string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if x := d.docs[id]; x != nil {
		return x.owner
	}
	return ""
}

// Create makes a document with its first version v1.r0.
func (d *Docs) Create(id, owner string, body flowdoc.Document) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.docs[id]; ok {
		return fmt.Errorf("synctest: document %q exists", id)
	}
	if ps := flowdoc.Validate(body, flowdoc.DefaultLimits); len(ps) > 0 {
		return &flowdoc.ValidationError{Problems: ps}
	}
	x := &doc{owner: owner, tomb: map[string]uint64{}, epoch: d.epoch}
	for _, b := range body.Blocks {
		x.blocks = append(x.blocks, fblock{b: b.Clone()})
	}
	d.docs[id] = x
	_, err := d.sealLocked(id, x, "create", "create", owner, "")
	return err
}

// Restart simulates a new server process: drafts left unsealed now are
// sealed as recovery checkpoints when next opened.
func (d *Docs) Restart() {
	d.mu.Lock()
	d.epoch++
	d.mu.Unlock()
}

// Versions returns the log of doc, oldest first.
func (d *Docs) Versions(id string) []repo.VersionInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	x := d.docs[id]
	if x == nil {
		return nil
	}
	out := make([]repo.VersionInfo, len(x.versions))
	for i, v := range x.versions {
		out[i] = v.info
	}
	return out
}

// Trim drops the events of doc's stream before keep (retention).
func (d *Docs) Trim(id string, keep uint64) error {
	b := d.db.NewBatch()
	defer b.Close()
	if err := stream.Trim(b, syncproto.DocStream(id), keep); err != nil {
		return err
	}
	return b.Commit(pebble.Sync)
}

// AppendEvent appends an event to any stream (for run:<id> tests).
func (d *Docs) AppendEvent(name, typ string, data any) (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.appendLocked(name, typ, data)
}

func (d *Docs) appendLocked(name, typ string, data any) (uint64, error) {
	last, err := stream.Last(d.db, name)
	if err != nil {
		return 0, err
	}
	b := d.db.NewBatch()
	defer b.Close()
	if err := stream.Append(b, name, last+1, typ, time.Now().UnixMilli(), data); err != nil {
		return 0, err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return 0, err
	}
	d.hub.Notify(name)
	return last + 1, nil
}

func notFound(id string) error { return &repo.NotFoundError{What: "document", Name: id} }

func (x *doc) body() flowdoc.Document {
	out := flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: make([]flowdoc.Block, len(x.blocks))}
	for i, b := range x.blocks {
		out.Blocks[i] = b.b.Clone()
	}
	return out
}

func (x *doc) head() repo.VersionInfo { return x.versions[len(x.versions)-1].info }

func (x *doc) draft(id string) repo.Draft {
	body := x.body()
	h := x.head()
	return repo.Draft{Doc: id, Seq: x.seq, Body: body, Attrs: x.attrs, Fingerprint: flowdoc.FingerprintOf(body),
		Head: h.Label, HeadID: h.Hash, Unsealed: x.unsealed, UnsealedSince: x.unsealedSince, LastChange: x.lastChange}
}

// OpenDraft implements syncproto.Docs.
func (d *Docs) OpenDraft(_ context.Context, id, actor string) (repo.Draft, *repo.VersionInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	x := d.docs[id]
	if x == nil {
		return repo.Draft{}, nil, notFound(id)
	}
	var rec *repo.VersionInfo
	if x.unsealed && x.epoch != d.epoch {
		v, err := d.sealLocked(id, x, "checkpoint", "recovery", actor, "")
		if err != nil {
			return repo.Draft{}, nil, err
		}
		rec = &v
	}
	return x.draft(id), rec, nil
}

// Draft implements syncproto.Docs.
func (d *Docs) Draft(_ context.Context, id string) (repo.Draft, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	x := d.docs[id]
	if x == nil {
		return repo.Draft{}, notFound(id)
	}
	return x.draft(id), nil
}

// SaveDraft implements syncproto.Docs.
func (d *Docs) SaveDraft(_ context.Context, p repo.SaveParams) (repo.SaveResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	x := d.docs[p.Doc]
	if x == nil {
		return repo.SaveResult{}, notFound(p.Doc)
	}
	// Baseline check: every touched block unchanged since BaseSeq.
	var touched []string
	if p.Body != nil {
		for _, b := range x.blocks {
			touched = append(touched, b.b.ID)
		}
		for _, b := range p.Body.Blocks {
			touched = append(touched, b.ID)
		}
	}
	for _, ch := range p.Changes {
		if ch.Op == "upsert" && ch.Block != nil {
			touched = append(touched, ch.Block.ID)
		} else {
			touched = append(touched, ch.BlockID)
		}
	}
	var stale []repo.ConflictBlock
	seen := map[string]bool{}
	for _, id := range touched {
		if seen[id] {
			continue
		}
		seen[id] = true
		if i := x.index(id); i >= 0 && x.blocks[i].seq > p.BaseSeq {
			b := x.blocks[i].b.Clone()
			stale = append(stale, repo.ConflictBlock{ID: id, Block: &b, Seq: x.blocks[i].seq})
		} else if s, ok := x.tomb[id]; ok && i < 0 && s > p.BaseSeq {
			stale = append(stale, repo.ConflictBlock{ID: id, Seq: s})
		}
	}
	if len(stale) > 0 {
		return repo.SaveResult{}, &repo.ConflictError{Doc: p.Doc, Seq: x.seq,
			Reason: fmt.Sprintf("blocks changed since seq %d", p.BaseSeq), Blocks: stale}
	}

	// Apply to a copy; validate; only then store.
	next := slices.Clone(x.blocks)
	seq := x.seq + 1
	var changed []string
	var deleted []string
	if p.Body != nil {
		old := map[string]flowdoc.Block{}
		for _, b := range x.blocks {
			old[b.b.ID] = b.b
		}
		next = next[:0:0]
		for _, b := range p.Body.Blocks {
			next = append(next, fblock{b: b.Clone(), seq: seq})
			changed = append(changed, b.ID)
			delete(old, b.ID)
		}
		for id := range old {
			deleted = append(deleted, id)
		}
	}
	for i, ch := range p.Changes {
		var err error
		next, err = applyChange(next, ch, seq)
		if err != nil {
			return repo.SaveResult{}, &flowdoc.ValidationError{Problems: []flowdoc.Problem{{Path: fmt.Sprintf("changes[%d]", i), Rule: err.Error()}}}
		}
		if ch.Op == "delete" {
			deleted = append(deleted, ch.BlockID)
		} else if ch.Op == "upsert" {
			changed = append(changed, ch.Block.ID)
		} else {
			changed = append(changed, ch.BlockID)
		}
	}
	body := flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion}
	for _, b := range next {
		body.Blocks = append(body.Blocks, b.b)
	}
	if ps := flowdoc.Validate(body, flowdoc.DefaultLimits); len(ps) > 0 {
		return repo.SaveResult{}, &flowdoc.ValidationError{Problems: ps}
	}
	if p.Attrs != nil && strings.TrimSpace(p.Attrs.Title) == "" {
		return repo.SaveResult{}, &flowdoc.ValidationError{Problems: []flowdoc.Problem{{Path: "attrs.title", Rule: "title must not be empty"}}}
	}

	now := time.Now().UnixMilli()
	fp := flowdoc.FingerprintOf(body)
	ev := syncproto.DraftUpdated{Doc: p.Doc, Seq: seq, Session: p.Session, Actor: p.Actor, Fingerprint: fp,
		Unsealed: true, Changes: p.Changes, Body: p.Body, Attrs: p.Attrs}
	if _, err := d.appendLocked(syncproto.DocStream(p.Doc), syncproto.TypeDraftUpdated, ev); err != nil {
		return repo.SaveResult{}, err
	}
	x.blocks, x.seq, x.lastChange, x.epoch = next, seq, now, d.epoch
	for _, id := range deleted {
		x.tomb[id] = seq
	}
	if p.Attrs != nil {
		x.attrs = *p.Attrs
	}
	if !x.unsealed {
		x.unsealed, x.unsealedSince = true, now
	}
	return repo.SaveResult{Seq: seq, Fingerprint: fp, Unsealed: true, Changed: changed}, nil
}

func (x *doc) index(id string) int {
	for i, b := range x.blocks {
		if b.b.ID == id {
			return i
		}
	}
	return -1
}

func indexIn(bs []fblock, id string) int {
	for i, b := range bs {
		if b.b.ID == id {
			return i
		}
	}
	return -1
}

// insertAt returns the index after anchor (0 for "", len for nil).
func insertAt(bs []fblock, after *string) (int, error) {
	if after == nil {
		return len(bs), nil
	}
	if *after == "" {
		return 0, nil
	}
	i := indexIn(bs, *after)
	if i < 0 {
		return 0, fmt.Errorf("anchor block %q does not exist", *after)
	}
	return i + 1, nil
}

func applyChange(bs []fblock, ch repo.DraftChange, seq uint64) ([]fblock, error) {
	switch ch.Op {
	case "upsert":
		if ch.Block == nil || ch.Block.ID == "" {
			return nil, errors.New("upsert needs a block with an id")
		}
		if i := indexIn(bs, ch.Block.ID); i >= 0 {
			bs[i] = fblock{b: ch.Block.Clone(), seq: seq}
			return bs, nil
		}
		at, err := insertAt(bs, ch.After)
		if err != nil {
			return nil, err
		}
		return slices.Insert(bs, at, fblock{b: ch.Block.Clone(), seq: seq}), nil
	case "delete":
		i := indexIn(bs, ch.BlockID)
		if i < 0 {
			return nil, fmt.Errorf("block %q does not exist", ch.BlockID)
		}
		return slices.Delete(bs, i, i+1), nil
	case "move":
		i := indexIn(bs, ch.BlockID)
		if i < 0 {
			return nil, fmt.Errorf("block %q does not exist", ch.BlockID)
		}
		b := bs[i]
		b.seq = seq
		bs = slices.Delete(bs, i, i+1)
		at, err := insertAt(bs, ch.After)
		if err != nil {
			return nil, err
		}
		return slices.Insert(bs, at, b), nil
	}
	return nil, fmt.Errorf("unknown op %q", ch.Op)
}

// sealLocked appends a version of the draft and its version.created event.
func (d *Docs) sealLocked(id string, x *doc, kind, reason, actor, msg string) (repo.VersionInfo, error) {
	body := x.body()
	major, rev := 1, 0
	if n := len(x.versions); n > 0 {
		major, rev = parseLabel(x.versions[n-1].info.Label)
		rev++
		if kind == "restore" {
			major, rev = major+1, 0
		}
	}
	info := repo.VersionInfo{Doc: id, Label: "v" + strconv.Itoa(major) + ".r" + strconv.Itoa(rev),
		Seq: uint64(len(x.versions) + 1), Kind: kind, Reason: reason, Author: actor, Time: time.Now().UnixMilli(),
		Message: msg, Fingerprint: flowdoc.FingerprintOf(body), Blocks: len(body.Blocks)}
	info.Hash[0], info.Hash[1] = byte(info.Seq>>8), byte(info.Seq)
	if _, err := d.appendLocked(syncproto.DocStream(id), syncproto.TypeVersionCreated, info); err != nil {
		return repo.VersionInfo{}, err
	}
	x.versions = append(x.versions, version{info: info, body: body})
	x.unsealed, x.unsealedSince = false, 0
	return info, nil
}

func parseLabel(l string) (major, rev int) {
	a, b, _ := strings.Cut(strings.TrimPrefix(l, "v"), ".r")
	major, _ = strconv.Atoi(a)
	rev, _ = strconv.Atoi(b)
	return major, rev
}

// Checkpoint implements syncproto.Docs.
func (d *Docs) Checkpoint(_ context.Context, id, reason, actor, msg string) (repo.VersionInfo, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	x := d.docs[id]
	if x == nil {
		return repo.VersionInfo{}, false, notFound(id)
	}
	if !x.unsealed {
		return x.head(), false, nil
	}
	v, err := d.sealLocked(id, x, "checkpoint", reason, actor, msg)
	return v, err == nil, err
}

// Restore implements syncproto.Docs: the draft becomes the restored
// version's body, sealed as a new major.
func (d *Docs) Restore(_ context.Context, id, label, actor string) (repo.VersionInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	x := d.docs[id]
	if x == nil {
		return repo.VersionInfo{}, notFound(id)
	}
	var src *version
	for i := range x.versions {
		if x.versions[i].info.Label == label {
			src = &x.versions[i]
		}
	}
	if src == nil {
		return repo.VersionInfo{}, &repo.NotFoundError{What: "version", Name: label, Latest: x.head().Label}
	}
	if x.unsealed {
		if _, err := d.sealLocked(id, x, "checkpoint", "restore", actor, ""); err != nil {
			return repo.VersionInfo{}, err
		}
	}
	seq := x.seq + 1
	body := src.body.Clone()
	ev := syncproto.DraftUpdated{Doc: id, Seq: seq, Actor: actor, Fingerprint: flowdoc.FingerprintOf(body), Body: &body}
	if _, err := d.appendLocked(syncproto.DocStream(id), syncproto.TypeDraftUpdated, ev); err != nil {
		return repo.VersionInfo{}, err
	}
	x.blocks = x.blocks[:0]
	for _, b := range body.Blocks {
		x.blocks = append(x.blocks, fblock{b: b, seq: seq})
	}
	x.seq = seq
	v, err := d.sealLocked(id, x, "restore", "restore", actor, "")
	if err != nil {
		return repo.VersionInfo{}, err
	}
	v.RestoredFrom = label
	return v, nil
}
