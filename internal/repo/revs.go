package repo

import (
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
// Cost: revsPerDoc revisions a document and revsTotal across documents
// (about 100 bytes each; content objects are in the store already), a
// look-up is one pass over a document's revisions.
const (
	revsPerDoc = 256
	revsTotal  = 1 << 16
)

// blockRev says block id had content from seq on (until its next
// revision); zero content: it was deleted at seq.
type blockRev struct {
	id      string
	seq     uint64
	content objstore.ID
	actor   string // who made it; "" for a state recorded as found
}

type docRevs struct {
	last uint64 // the draft seq the log is continuous up to
	revs []blockRev
}

type revLog struct {
	mu   sync.Mutex
	docs map[string]*docRevs
	n    int
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
		d.revs = append(d.revs, nw)
	}
	if over := len(d.revs) - revsPerDoc; over > 0 {
		d.revs = slices.Delete(d.revs, 0, over)
	}
	d.last = after
	l.n += len(d.revs) - n0
	for other, od := range l.docs {
		if l.n <= revsTotal {
			break
		}
		if other != doc {
			l.n -= len(od.revs)
			delete(l.docs, other)
		}
	}
}

// at returns block id's revision current at baseSeq, when the log of doc
// is continuous up to the draft's seq cur and holds it and the block was
// not deleted since, and the actors of the block's revisions after
// baseSeq.
func (l *revLog) at(doc string, cur uint64, id string, baseSeq uint64) (blockRev, []string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.docs[doc]
	if d == nil || d.last != cur {
		return blockRev{}, nil, false
	}
	var best blockRev
	found, gone := false, false
	var actors []string
	for _, r := range d.revs {
		if r.id != id {
			continue
		}
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
	return best, actors, found && !gone && !best.content.IsZero()
}

// mergeStale merges, for a save with Merge, each upsert of a text block
// the draft changed since BaseSeq with the draft's version (docs/protocol.md
// "Merging inside a block"): the change's block becomes the merged one.
// It returns the merged blocks and the authors of the revisions merged
// (the saving actor included). A block that cannot be merged (overlapping
// edits, not a text block, a base the log does not hold) is left as it
// is: the stale check makes it a conflict.
func (r *Repo) mergeStale(p SaveParams, dr *draftRec, prep *savePrep) (map[string]bool, []EventBlock, []string) {
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
		rev, who, ok := r.revs.at(p.Doc, dr.Seq, id, p.BaseSeq)
		if !ok {
			continue
		}
		base, err := r.block(rev.content, id)
		if err != nil {
			continue
		}
		cur, err := r.block(db.Content, id)
		if err != nil {
			continue
		}
		m, err := merge.Block(base, cur, c.nb.blk)
		if err != nil {
			continue
		}
		one, size, err := flowdoc.NormalizeSize(flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: []flowdoc.Block{m}}, r.limits)
		if err != nil || len(one.Blocks) != 1 {
			continue
		}
		c.nb = encodeSized(one.Blocks[0], size-emptyBodySize)
		if merged == nil {
			merged = map[string]bool{}
		}
		merged[id] = true
		blocks = append(blocks, EventBlock{ID: id, Block: &c.nb.blk})
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
