package repo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
)

// DefaultPrune is how long a reflog entry keeps the versions it names.
const DefaultPrune = 14 * 24 * time.Hour

// ErrGCRunning is returned when a collection is already running; it is
// an ErrConflict.
var ErrGCRunning = errs.E(errs.Conflict, "a gc is already running; wait for it to finish")

// GCOptions tune GC.
type GCOptions struct {
	// Prune: reflog entries and asset uploads younger than this keep what
	// they name (zero:
	// DefaultPrune; negative: no reflog entry keeps anything).
	Prune time.Duration
	// Roots are more objects to keep with everything they reach (open
	// suggestions' baselines, for example).
	Roots []objstore.ID
	// DryRun counts what would be removed and removes nothing.
	DryRun bool
	// Progress, when set, is told of the objects marked and scanned.
	Progress Progress
}

// GCReport says what a collection found and did.
type GCReport struct {
	Objects   int   `json:"objects"`   // objects in the store before
	Reachable int   `json:"reachable"` // objects kept because something reaches them
	Removed   int   `json:"removed"`   // objects removed (or, with DryRun, that would be)
	Bytes     int64 `json:"bytes"`     // stored bytes of the removed objects
	// Purged is the number of deleted documents purged (DeleteDoc: those
	// deleted longer than Prune ago); with DryRun, that would be. The
	// objects only they reach are counted by the run that purges them.
	Purged int  `json:"purged"`
	DryRun bool `json:"dryRun"`
}

// GC purges the documents deleted longer than Prune ago (DeleteDoc), then
// removes every object that nothing reaches: not a ref (document heads,
// backup namespaces), not a draft, not a reflog entry younger than Prune,
// not an asset uploaded within Prune, not one of o.Roots. It is safe while other goroutines write: writers hold
// a write pass and every object they look up during the collection is kept
// (see kv.DB.WritePass), so an object a concurrent save reuses is never
// removed.
func (r *Repo) GC(ctx context.Context, o GCOptions) (GCReport, error) {
	if !r.gcMu.TryLock() {
		return GCReport{}, ErrGCRunning
	}
	defer r.gcMu.Unlock()
	prune := o.Prune
	if prune == 0 {
		prune = DefaultPrune
	}
	rep := GCReport{DryRun: o.DryRun}

	release := r.db.Exclusive()
	r.db.StartTouching()
	release()
	stopped := false
	defer func() {
		if !stopped {
			release := r.db.Exclusive()
			r.db.StopTouching()
			release()
		}
	}()

	// Documents deleted longer than prune ago go first, so that the
	// objects only they reached are collected in this run.
	cutoff := r.now().UnixMilli() // prune < 0: every deleted document
	if prune >= 0 {
		cutoff = r.now().Add(-prune).UnixMilli()
	}
	purged, n, err := r.purgeDeleted(ctx, cutoff, o.DryRun)
	if err != nil {
		return rep, err
	}
	rep.Purged = n
	if o.DryRun {
		purged = nil // their refs are still there and still count
	}
	roots, err := r.gcRoots(ctx, prune, o.Roots, purged)
	if err != nil {
		return rep, err
	}
	progress := o.Progress.orNop()
	// List first, so that the mark knows how many objects there are at
	// most to reach (the meter's total, percentage and time left). An
	// object written after the listing is no candidate, so nothing a
	// writer adds meanwhile is at risk.
	type listed struct {
		size  int
		asset bool
	}
	all := map[objstore.ID]listed{}
	err = r.objs.ForEach(func(id objstore.ID, info objstore.StoredInfo) error {
		if err := ctxErr(ctx); err != nil {
			return err
		}
		rep.Objects++
		if rep.Objects%256 == 0 {
			progress("objects listed", int64(rep.Objects), 0)
		}
		all[id] = listed{size: info.Size, asset: info.Kind == objstore.KindAsset}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("gc: list objects: %w", err)
	}
	progress("objects listed", int64(rep.Objects), int64(rep.Objects))
	keep := make(map[objstore.ID]bool, len(all))
	total := int64(len(all))
	err = r.objs.Walk(roots, nil, func(id objstore.ID, _ objstore.Kind, _ []byte) error {
		keep[id] = true
		if n := int64(len(keep)); n%256 == 0 {
			if err := ctxErr(ctx); err != nil {
				return err
			}
			progress("objects marked", min(n, total), total)
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("gc: mark: %w", err)
	}
	progress("objects marked", total, total)
	var cands []objstore.ID
	size := map[objstore.ID]int{}
	assets := map[objstore.ID]bool{}
	for id, l := range all {
		if !keep[id] {
			cands = append(cands, id)
			size[id] = l.size
			if l.asset {
				assets[id] = true
			}
		}
	}
	all = nil

	// Sweep with writers kept out: drop what they touched meanwhile, and
	// everything a touched candidate reaches.
	release = r.db.Exclusive()
	defer release()
	touched := r.db.StopTouching()
	stopped = true
	var revived []objstore.ID
	for _, id := range cands {
		if _, ok := touched[string(objstore.Key(id))]; ok {
			revived = append(revived, id)
		}
	}
	if len(revived) > 0 {
		more, err := r.objs.Reachable(revived, nil)
		if err != nil {
			return rep, fmt.Errorf("gc: mark revived: %w", err)
		}
		for _, id := range more {
			keep[id] = true
		}
	}
	dead := cands[:0]
	for _, id := range cands {
		if !keep[id] {
			dead = append(dead, id)
			rep.Bytes += int64(size[id])
		}
	}
	rep.Removed = len(dead)
	rep.Reachable = rep.Objects - rep.Removed
	if o.DryRun || len(dead) == 0 {
		return rep, nil
	}
	b := r.db.NewBatch()
	defer b.Close()
	if err := r.objs.Delete(b, dead); err != nil {
		return rep, fmt.Errorf("gc: %w", err)
	}
	for _, id := range dead {
		if assets[id] {
			if err := deleteAssetRecords(b, id); err != nil {
				return rep, fmt.Errorf("gc: %w", err)
			}
		}
	}
	if err := r.db.Apply(b, kv.Sync); err != nil {
		return rep, fmt.Errorf("gc: commit: %w", err)
	}
	return rep, nil
}

// gcRoots lists what keeps objects alive: every ref, the versions named by
// reflog entries younger than prune, every draft's blocks (and so the
// assets they name), the assets uploaded within prune, and extra.
func (r *Repo) gcRoots(ctx context.Context, prune time.Duration, extra []objstore.ID, purged map[string]bool) ([]objstore.ID, error) {
	roots := append([]objstore.ID(nil), extra...)
	if prune >= 0 {
		recent, err := r.recentAssets(ctx, r.now().Add(-prune))
		if err != nil {
			return nil, err
		}
		roots = append(roots, recent...)
	}
	vals, names, err := r.refs.List("")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		roots = append(roots, vals[n])
	}
	if prune >= 0 {
		// Every reflog, also of refs deleted since.
		logged, err := r.refs.Names()
		if err != nil {
			return nil, err
		}
		cutoff := r.now().Add(-prune).UnixMilli()
		for _, n := range logged {
			if purged[n] {
				continue // a purged document's: only it reached them
			}
			log, err := r.refs.Reflog(n)
			if err != nil {
				return nil, err
			}
			for _, e := range log {
				if e.Time < cutoff {
					continue
				}
				for _, id := range []objstore.ID{e.Old, e.New} {
					if ok, _ := r.objs.Has(id); ok && !id.IsZero() {
						roots = append(roots, id)
					}
				}
			}
		}
	}
	p := kv.TableKey("draft")
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		var dr draftRec
		if err := kv.Unmarshal(it.Value(), &dr); err != nil {
			return nil, fmt.Errorf("gc: decode draft %s: %w", it.Key(), err)
		}
		for _, b := range dr.Blocks { // layout 1: the blocks are in the record
			roots = append(roots, b.Content)
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	// Layout 2: one key per draft block (draftstore.go).
	p = kv.TableKey("dblk")
	bit, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer bit.Close()
	for bit.First(); bit.Valid(); bit.Next() {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		var blk draftBlock
		if n, err := decodeDraftBlock(bit.Value(), &blk); err != nil || n != len(bit.Value()) {
			return nil, fmt.Errorf("gc: decode draft block %x: %w", bit.Key(), errors.Join(err, errDraftCodec))
		}
		roots = append(roots, blk.Content)
	}
	return roots, bit.Error()
}
