package assistant

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
)

// Carrying a suggestion over (DESIGN §6). A suggestion scoped to blocks
// (selection, block, section) watches its target blocks and every block
// its operations name, as top-level blocks of its baseline with their
// content there (Suggestion.Watch). While those are unchanged it stays
// pending whatever else changes, and an accept carries it over to the
// current head and draft (repo.ChangeParams.CarryOver). The first change
// of a watched block conflicts it at once, in that change's batch. A
// whole-document suggestion watches everything: any body change or new
// version conflicts it, as before.
//
// So that a save costs in proportion to the blocks it changes, pending
// suggestions are indexed by watched block ("asugblk": doc, block,
// suggestion) and whole-document ones apart ("asugall": doc, suggestion).
// Suggestions stored before Watch existed are strict (indexed under
// "asugall" by a one-time pass, migrateWatch).

// Carried says an accepted suggestion was carried over from its baseline
// to a newer one.
type Carried struct {
	// From is the suggestion's own baseline (version label, id,
	// fingerprint); To is the carried-over baseline the accept was checked
	// and applied against: the head then, and the draft's fingerprint.
	From BaseRef `json:"from" msgpack:"from"`
	To   BaseRef `json:"to" msgpack:"to"`
}

// BaseRef names a baseline.
type BaseRef struct {
	Label       string              `json:"label" msgpack:"label"`
	Version     objstore.ID         `json:"version" msgpack:"version"`
	Fingerprint flowdoc.Fingerprint `json:"fingerprint" msgpack:"fp"`
}

// strict reports whether sg must apply to exactly its baseline: a
// whole-document suggestion, one that replaces the document, or one
// stored before suggestions recorded what they watch.
func (sg *Suggestion) strict() bool {
	if sg.Scope.Kind == ScopeDocument || len(sg.Watch) == 0 {
		return true
	}
	for _, op := range sg.Ops {
		if op.Op == flowdoc.ReplaceDocument {
			return true
		}
	}
	return false
}

// watchOf is what a block-scoped suggestion with ops against base (whose
// body is body) watches: its targets and the top-level blocks holding
// every block an operation names, with their content at the baseline.
// Blocks an operation inserts are not in the baseline and are not watched.
func watchOf(body flowdoc.Document, base Baseline, ops []flowdoc.Op) []Target {
	seen := map[string]bool{}
	var out []Target
	for _, t := range base.Targets {
		if !seen[t.ID] {
			seen[t.ID] = true
			out = append(out, t)
		}
	}
	top := map[string]int{} // any block id -> index of its top-level block
	for i, b := range body.Blocks {
		markTop(top, b, i)
	}
	add := func(id string) {
		i, ok := top[id]
		if !ok {
			return
		}
		tb := body.Blocks[i]
		if seen[tb.ID] {
			return
		}
		seen[tb.ID] = true
		out = append(out, Target{ID: tb.ID, Content: objstore.Sum(objstore.KindContent, flowdoc.EncodeContent(tb))})
	}
	for _, op := range ops {
		if op.BlockID != "" {
			add(op.BlockID)
		}
		if op.Op == flowdoc.ReplaceBlock && op.Block != nil {
			add(op.Block.ID)
		}
		for _, b := range op.Blocks {
			add(b.ID)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func markTop(top map[string]int, b flowdoc.Block, i int) {
	top[b.ID] = i
	for _, n := range b.Nested() {
		for _, c := range *n {
			markTop(top, c, i)
		}
	}
}

// watchMap is sg's watched blocks as repo.ChangeParams.TargetBlocks.
func (sg *Suggestion) watchMap() map[string]objstore.ID {
	src := sg.Watch
	if sg.strict() {
		src = sg.Base.Targets
	}
	m := make(map[string]objstore.ID, len(src))
	for _, t := range src {
		m[t.ID] = t.Content
	}
	return m
}

// watchIDs is the ids sg watches.
func (sg *Suggestion) watchIDs() []string {
	ids := make([]string, len(sg.Watch))
	for i, t := range sg.Watch {
		ids[i] = t.ID
	}
	return ids
}

// changedWatched returns the watched blocks of sg whose content in cur
// (block id -> content; absent: deleted) differs from the baseline.
func (sg *Suggestion) changedWatched(cur map[string]objstore.ID) []string {
	var hit []string
	for _, t := range sg.Watch {
		if c, ok := cur[t.ID]; !ok || c != t.Content {
			hit = append(hit, t.ID)
		}
	}
	return hit
}

// indexPending adds pending suggestion sg to the indexes a change consults.
func indexPending(b *kv.Batch, sg *Suggestion) error {
	if err := b.Set(suggPendKey(sg.Doc, sg.ID), nil); err != nil {
		return err
	}
	if sg.strict() {
		return b.Set(suggAllKey(sg.Doc, sg.ID), nil)
	}
	for _, t := range sg.Watch {
		if err := b.Set(suggBlkKey(sg.Doc, t.ID, sg.ID), nil); err != nil {
			return err
		}
	}
	return nil
}

// unindexPending removes sg from the pending indexes (it was accepted,
// rejected or conflicted).
func unindexPending(b *kv.Batch, sg *Suggestion) error {
	if err := b.Delete(suggPendKey(sg.Doc, sg.ID)); err != nil {
		return err
	}
	if err := b.Delete(suggAllKey(sg.Doc, sg.ID)); err != nil {
		return err
	}
	for _, t := range sg.Watch {
		if err := b.Delete(suggBlkKey(sg.Doc, t.ID, sg.ID)); err != nil {
			return err
		}
	}
	return nil
}

// affected returns the pending suggestions of change c's document that c
// conflicts: every strict one when c changed the body or sealed a version,
// and every block-scoped one watching a block c changed, with the
// watched blocks it changed. It reads one index prefix per changed block
// plus the strict ones'.
func (s *Service) affected(c *repo.Change) (map[string][]string, error) {
	out := map[string][]string{}
	keys, err := kv.Keys(s.db, suggAllPrefix(c.Doc), 0)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		out[lastAfterZero(k)] = nil
	}
	for _, id := range c.Changed {
		keys, err := kv.Keys(s.db, suggBlkPrefix(c.Doc, id), 0)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			sid := lastAfterZero(k)
			out[sid] = append(out[sid], id)
		}
	}
	return out, nil
}

// conflictReason says why change c conflicts sg (hit: its watched blocks
// that c changed).
func conflictReason(sg *Suggestion, hit []string, c *repo.Change) string {
	if len(hit) > 0 {
		return fmt.Sprintf("its blocks %s changed (%s)", strings.Join(hit, ", "), byWhat(c))
	}
	return fmt.Sprintf("the article changed after %s (%s)", sg.Base.Label, byWhat(c))
}

// watchMarker marks a store whose pending suggestions are all indexed
// for carrying over (migrateWatch ran).
func watchMarker() []byte { return kv.TableKey("meta", "assistant-watch-v1") }

// migrateWatch indexes the pending suggestions stored before suggestions
// recorded what they watch as strict (whole-document) ones, once. It is a
// start-up write: on a disk below its reserve it is left for the next
// start (such suggestions are still checked in full when accepted).
func (s *Service) migrateWatch(ctx context.Context) error {
	if ok, err := kv.Has(s.db, watchMarker()); err != nil || ok {
		return err
	}
	p := kv.TableKey(tableSuggPend)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			it.Close()
			return err
		}
		sg, err := s.loadSuggestion(s.db, lastAfterZero(it.Key()))
		if err != nil {
			it.Close()
			return err
		}
		if sg.Status == StatusPending {
			if err := indexPending(b, &sg); err != nil {
				it.Close()
				return err
			}
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	if err := b.Set(watchMarker(), []byte{1}); err != nil {
		return err
	}
	err = s.db.Apply(b, kv.Sync)
	if kv.BelowReserve(err) {
		s.log.Warn("indexing pending suggestions waits for the next start: the disk is below its reserve (they are checked in full when accepted)")
		return nil
	}
	return err
}
