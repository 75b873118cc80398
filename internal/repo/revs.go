package repo

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/flowdoc/merge"
	"github.com/foliodev/folio/objstore"
)

// Merging a save inside a block (SaveParams.Merge) needs the block as it
// was at the save's BaseSeq. The repository keeps, in memory, the recent
// revisions of each document's blocks as draft saves make them: for each
// change the block's content and the seq that made it, plus the block's
// state before its first recorded change. The log of a document is
// continuous: it holds every change since it began, because it is
// dropped whenever the draft moved by a path that does not record (a
// restore, an accepted suggestion, a sealing save) or was not kept in
// memory (a restart). The content at BaseSeq is then the revision with
// the greatest seq at or below it; when the log cannot tell (too old, or
// dropped), the save is strict and conflicts as before.
//
// The most recent revisions (decodedPerDoc of each document, decodedBytes
// in all) also keep the block decoded, as the save that made it had it:
// a merge is nearly always against the block's last revision and one a
// few saves older, and reading those back from the store and decoding
// them cost a merged save more than the merge itself.
//
// Cost: revsPerDoc revisions a document and revsTotal across documents
// (about 100 bytes each; content objects are in the store already) plus
// at most decodedBytes of decoded blocks (counted by their canonical JSON
// size); a look-up is one pass over a document's revisions.
const (
	revsPerDoc    = 256
	revsTotal     = 1 << 16
	decodedPerDoc = 32
	decodedBytes  = 16 << 20
)

// blockRev says block id had content from seq on (until its next
// revision); zero content: it was deleted at seq.
type blockRev struct {
	id      string
	seq     uint64
	content objstore.ID
	actor   string // who made it; "" for a state recorded as found
	// blk is the decoded content when the log keeps it (nil: read it
	// from the store), size its canonical JSON size. Shared by every
	// reader of the log: never changed.
	blk  *flowdoc.Block
	size int
}

type docRevs struct {
	last    uint64 // the draft seq the log is continuous up to
	revs    []blockRev
	decoded int // bytes of the revisions' blk
}

type revLog struct {
	mu      sync.Mutex
	docs    map[string]*docRevs
	n       int
	decoded int // bytes of every document's blk
}

// record notes the revisions a committed save made: the draft went from
// seq before to after, changing each block of olds (its state before) to
// the content in news.
func (l *revLog) record(doc string, before, after uint64, olds, news []blockRev) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.docs == nil {
		l.docs = map[string]*docRevs{}
	}
	d := l.docs[doc]
	if d == nil || d.last != before {
		if d != nil {
			l.n -= len(d.revs)
			l.decoded -= d.decoded
		}
		d = &docRevs{}
		l.docs[doc] = d
	}
	n0 := len(d.revs)
	for _, o := range olds {
		// The state before is the block's last revision in the log unless
		// the block changed unrecorded (it came back after a delete).
		last := -1
		for i := len(d.revs) - 1; i >= 0; i-- {
			if d.revs[i].id == o.id {
				last = i
				break
			}
		}
		if last >= 0 && d.revs[last].seq == o.seq && d.revs[last].content == o.content {
			continue
		}
		d.revs = append(d.revs, o)
	}
	for _, nw := range news {
		nw.seq = after
		if nw.blk != nil {
			d.decoded += nw.size
			l.decoded += nw.size
		}
		d.revs = append(d.revs, nw)
	}
	if over := len(d.revs) - revsPerDoc; over > 0 {
		for _, old := range d.revs[:over] {
			if old.blk != nil {
				d.decoded -= old.size
				l.decoded -= old.size
			}
		}
		d.revs = slices.Delete(d.revs, 0, over)
	}
	// Only the newest revisions keep their block decoded.
	for i := len(d.revs) - decodedPerDoc - 1; i >= 0 && i >= len(d.revs)-decodedPerDoc-len(news)-len(olds); i-- {
		d.forget(l, i)
	}
	d.last = after
	l.n += len(d.revs) - n0
	for other, od := range l.docs {
		if l.n <= revsTotal {
			break
		}
		if other != doc {
			l.n -= len(od.revs)
			l.decoded -= od.decoded
			delete(l.docs, other)
		}
	}
	// Over the byte bound, other documents' decoded blocks go first,
	// then this one's.
	for other, od := range l.docs {
		if l.decoded <= decodedBytes {
			break
		}
		if other != doc {
			od.forgetAll(l)
		}
	}
	if l.decoded > decodedBytes {
		d.forgetAll(l)
	}
}

func (d *docRevs) forgetAll(l *revLog) {
	for i := range d.revs {
		d.forget(l, i)
	}
}

// forget drops revision i's decoded block.
func (d *docRevs) forget(l *revLog, i int) {
	if d.revs[i].blk != nil {
		d.decoded -= d.revs[i].size
		l.decoded -= d.revs[i].size
		d.revs[i].blk = nil
	}
}

// at returns block id's revision current at baseSeq, when the log of doc
// is continuous up to the draft's seq cur (any seq: 0) and holds it and
// the block was not deleted since, its last revision, and the actors of
// the block's revisions after baseSeq.
func (l *revLog) at(doc string, cur uint64, id string, baseSeq uint64) (base, last blockRev, actors []string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.docs[doc]
	if d == nil || (cur != 0 && d.last != cur) {
		return blockRev{}, blockRev{}, nil, false
	}
	var best blockRev
	found, gone := false, false
	for _, r := range d.revs {
		if r.id != id {
			continue
		}
		last = r
		switch {
		case r.seq <= baseSeq:
			if !found || r.seq > best.seq {
				best, found = r, true
			}
		case r.content.IsZero():
			gone = true // deleted since: strict, as docs/protocol.md says
		case r.actor != "" && !slices.Contains(actors, r.actor):
			actors = append(actors, r.actor)
		}
	}
	return best, last, actors, found && !gone && !best.content.IsZero()
}

// premerged is a merge done before the document lock, against the
// block's revision at BaseSeq (base) and its last one (cur) as the log
// had them then. The merge is a function of the three blocks alone, so
// it stands under the lock when base and cur are still what the log and
// the draft hold; otherwise the save merges again under the lock.
type premerged struct {
	base, cur objstore.ID
	nb        *newBlock // nil: the edits cannot be merged
}

// premerge does, before the document lock, the merges mergeStale would:
// for each upsert of a text block the log says changed since BaseSeq. A
// save of several documents' worth of writers into one block so spends
// under the lock only the check that its merge still holds.
//
// It is skipped while someone holds or waits for the document's lock:
// the saves ahead nearly always change the block (writers of one block
// are what makes merges), so a merge done now would be done again under
// the lock, and a loaded server would pay for two.
//
// A new block premerge did not merge is sealed here, outside the lock; one
// it merged is not: it is stored only if the block is unchanged since
// the save's base, which it is not.
func (r *Repo) premerge(p SaveParams, prep *savePrep) map[string]premerged {
	var out map[string]premerged
	busy := r.locks.busy(p.Doc)
	for i := range prep.changes {
		c := &prep.changes[i]
		if c.Op != ChangeUpsert || c.nb == nil || !merge.Mergeable(c.nb.blk.Type) {
			continue
		}
		if busy {
			c.nb.seal()
			continue
		}
		id := c.nb.blk.ID
		if _, dup := out[id]; dup {
			out[id] = premerged{} // twice in one save: mergeStale leaves it alone
			continue
		}
		base, cur, _, ok := r.revs.at(p.Doc, 0, id, p.BaseSeq)
		if !ok || cur.seq <= p.BaseSeq {
			c.nb.seal()
			continue
		}
		nb, err := r.mergeOne(id, base, cur, &c.nb.blk)
		if errors.Is(err, errRead) {
			c.nb.seal()
			continue
		}
		if out == nil {
			out = map[string]premerged{}
		}
		out[id] = premerged{base: base.content, cur: cur.content, nb: nb}
	}
	return out
}

// errRead marks a block mergeOne could not read.
var errRead = errors.New("repo: read a block to merge")

// mergeOne merges theirs into block id's revision cur from its revision
// base, and returns the merged block normalized and encoded.
func (r *Repo) mergeOne(id string, base, cur blockRev, theirs *flowdoc.Block) (*newBlock, error) {
	b, err := r.revBlock(id, base)
	if err != nil {
		return nil, err
	}
	o, err := r.revBlock(id, cur)
	if err != nil {
		return nil, err
	}
	m, err := merge.Block(*b, *o, *theirs)
	if err != nil {
		return nil, err
	}
	one, size, err := flowdoc.NormalizeSize(flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: []flowdoc.Block{m}}, r.limits)
	if err != nil {
		return nil, err
	}
	if len(one.Blocks) != 1 {
		return nil, errors.New("repo: a merged block is not one block")
	}
	return encodeSized(one.Blocks[0], size-emptyBodySize), nil
}

// revBlock returns revision rev of block id decoded: the log's copy when
// it kept one (not to be changed), else read from the store.
func (r *Repo) revBlock(id string, rev blockRev) (*flowdoc.Block, error) {
	if rev.blk != nil {
		return rev.blk, nil
	}
	b, err := r.block(rev.content, id)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errRead, err)
	}
	return &b, nil
}

// mergeStale merges, for a save with Merge, each upsert of a text block
// the draft changed since BaseSeq with the draft's version (docs/protocol.md
// "Merging inside a block"): the change's block becomes the merged one.
// pre holds the merges premerge did before the lock; one is used when its
// base and current revisions are still the block's. It returns the merged
// blocks (copies the caller may keep) and the authors of the revisions
// merged (the saving actor included). A block that cannot be merged
// (overlapping edits, not a text block, a base the log does not hold) is
// left as it is: the stale check makes it a conflict.
func (r *Repo) mergeStale(p SaveParams, dr *draftRec, prep *savePrep, pre map[string]premerged) (map[string]bool, []EventBlock, []string) {
	dr.index()
	count := map[string]int{}
	for _, c := range prep.changes {
		if c.Op == ChangeUpsert && c.nb != nil {
			count[c.nb.blk.ID]++
		}
	}
	var merged map[string]bool
	var blocks []EventBlock
	authors := []string{p.Actor}
	for i := range prep.changes {
		c := &prep.changes[i]
		if c.Op != ChangeUpsert || c.nb == nil || !merge.Mergeable(c.nb.blk.Type) {
			continue
		}
		id := c.nb.blk.ID
		pos, ok := dr.pos(id)
		if !ok || count[id] > 1 {
			continue
		}
		db := dr.Blocks[pos]
		if db.Seq <= p.BaseSeq {
			continue
		}
		base, cur, who, ok := r.revs.at(p.Doc, dr.Seq, id, p.BaseSeq)
		if !ok {
			continue
		}
		var nb *newBlock
		if pm, hit := pre[id]; hit && !pm.base.IsZero() && pm.base == base.content && pm.cur == db.Content {
			nb = pm.nb
		} else {
			if cur.content != db.Content {
				cur = blockRev{content: db.Content} // (a continuous log ends with the draft's)
			}
			nb, _ = r.mergeOne(id, base, cur, &c.nb.blk)
		}
		if nb == nil {
			continue
		}
		c.nb = nb
		if merged == nil {
			merged = map[string]bool{}
		}
		merged[id] = true
		// The log keeps c.nb.blk once the save commits: the caller gets
		// its own copy.
		cp := c.nb.blk.Clone()
		blocks = append(blocks, EventBlock{ID: id, Block: &cp})
		for _, a := range who {
			if !slices.Contains(authors, a) {
				authors = append(authors, a)
			}
		}
	}
	if merged == nil {
		return nil, nil, nil
	}
	slices.Sort(authors)
	return merged, blocks, authors
}

// without returns ids minus those in skip.
func without(ids []string, skip map[string]bool) []string {
	if len(skip) == 0 {
		return ids
	}
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return skip[id] })
}
