package repo

import (
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
)

// Fsck reads delta-coded versions and compact transactions with their
// history rather than on their own; it must still find each one that is
// damaged, and report a clean store as clean.
func TestFsckFindsDamagedDeltasAndTxns(t *testing.T) {
	r := newRepo(t)
	buildHistory(t, r, 2, 40)
	if rep, err := r.Fsck(ctx, FsckOptions{}); err != nil || !rep.OK || rep.Versions != 80 {
		t.Fatalf("clean store: %+v %v", rep, err)
	}
	// Pick a version stored as a delta and a transaction stored by
	// reference, and damage the last byte of each.
	var delta, txn []byte
	p := []byte(kv.PrefixObject)
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		t.Fatal(err)
	}
	for it.First(); it.Valid() && (delta == nil || txn == nil); it.Next() {
		switch d := objstore.ReadDepth(it.Value()); {
		case d > 1 && delta == nil:
			delta = append([]byte(nil), it.Key()...)
		case d < 0 && txn == nil:
			txn = append([]byte(nil), it.Key()...)
		}
	}
	it.Close()
	if delta == nil || txn == nil {
		t.Fatal("no delta-coded version or compact txn in the store")
	}
	for _, k := range [][]byte{delta, txn} {
		v, err := kv.Get(r.db, k)
		if err != nil {
			t.Fatal(err)
		}
		v[len(v)-1] ^= 0x55
		if err := r.db.Set(k, v, kv.Sync); err != nil {
			t.Fatal(err)
		}
	}
	r.objs = objstore.New(r.db) // forget what the caches hold
	rep, err := r.Fsck(ctx, FsckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK {
		t.Fatal("fsck found nothing wrong with a damaged delta and txn")
	}
	var all strings.Builder
	for _, pr := range rep.Problems {
		all.WriteString(pr.Object + " " + pr.Problem + "\n")
	}
	for _, k := range [][]byte{delta, txn} {
		var id objstore.ID
		copy(id[:], k[len(p):])
		if !strings.Contains(all.String(), id.String()) {
			t.Errorf("no problem names damaged object %s:\n%s", id.Short(), all.String())
		}
	}
}
