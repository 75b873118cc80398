package repo

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/objstore"
)

// recordingHook records every change and writes a marker in its batch.
type recordingHook struct {
	mu    sync.Mutex
	seen  []string
	fail  error
	count int
}

func (h *recordingHook) DocChanged(b *kv.Batch, c *Change) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail != nil {
		return h.fail
	}
	label := ""
	if c.Version != nil {
		label = c.Version.Label
	}
	h.seen = append(h.seen, fmt.Sprintf("%s %s %v body=%v sugg=%q", c.Kind, label, c.Changed, c.BodyChanged, c.SuggestionID))
	h.count++
	if err := b.Set(kv.TableKey("hooktest", c.Doc, fmt.Sprint(h.count)), []byte(c.Kind)); err != nil {
		return err
	}
	return c.Emit("hook.seen", map[string]any{"n": h.count})
}

func (h *recordingHook) last() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.seen) == 0 {
		return ""
	}
	return h.seen[len(h.seen)-1]
}

// The hook sees every body-changing path with the changed block ids, and
// its writes and events commit with the change.
func TestChangeHookSeesEveryChange(t *testing.T) {
	r := newRepo(t)
	h := &recordingHook{}
	r.SetHook(h)
	doc := create(t, r, 3)
	if got := h.last(); got != `create v1.r0 [b0 b1 b2] body=true sugg=""` {
		t.Fatalf("create: %s", got)
	}
	save(t, r, doc, 1, para("b1", "edited"))
	if got := h.last(); got != `draft  [b1] body=true sugg=""` {
		t.Fatalf("save: %s", got)
	}
	if _, _, err := r.Seal(ctx, doc, objstore.ReasonIdle, "author-a"); err != nil {
		t.Fatal(err)
	}
	if got := h.last(); got != `checkpoint v1.r1 [] body=false sugg=""` {
		t.Fatalf("checkpoint: %s", got)
	}
	dr, err := r.Draft(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	b2 := para("b2", "accepted text")
	v, err := r.CommitChange(ctx, ChangeParams{Doc: doc, Actor: "author-a", BaseVersion: dr.HeadID,
		BaseFingerprint: dr.Fingerprint, Ops: []flowdocOp{replaceBlock("b2", b2)}, SuggestionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.last(); got != `accept_suggestion v1.r2 [b2] body=true sugg="s1"` {
		t.Fatalf("commit: %s", got)
	}
	if _, err := r.Restore(ctx, doc, "v1.r0", "author-a"); err != nil {
		t.Fatal(err)
	}
	if got := h.last(); got != `restore v2.r0 [b1 b2] body=true sugg=""` {
		t.Fatalf("restore: %s", got)
	}
	_ = v
	// Each hook write and event is in the store: 5 changes.
	p := kv.TableKey("hooktest", doc, "")
	it, _ := r.DB().NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	it.Close()
	if n != 5 {
		t.Fatalf("%d hook records committed, want 5", n)
	}
	evs, err := stream.Read(r.DB(), Stream(doc), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i+1, e.Seq)
		}
		types = append(types, e.Type)
	}
	if !slices.Contains(types, "hook.seen") || types[len(types)-1] != "hook.seen" {
		t.Fatalf("events %v", types)
	}
}

// A hook error aborts the change: nothing is written.
func TestChangeHookErrorAbortsTheChange(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 2)
	h := &recordingHook{fail: errors.New("refused by hook")}
	r.SetHook(h)
	before, _ := r.Draft(ctx, doc)
	_, err := r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: "author-a", BaseSeq: before.Seq,
		Changes: []DraftChange{{Op: ChangeUpsert, Block: ptr(para("b0", "x"))}}})
	if err == nil || !errors.Is(err, h.fail) {
		t.Fatalf("save with a failing hook: %v", err)
	}
	after, _ := r.Draft(ctx, doc)
	if after.Seq != before.Seq || after.Fingerprint != before.Fingerprint {
		t.Fatal("a save refused by the hook changed the draft")
	}
	_, err = r.CommitChange(ctx, ChangeParams{Doc: doc, Actor: "author-a", BaseVersion: before.HeadID,
		BaseFingerprint: before.Fingerprint, Ops: []flowdocOp{replaceBlock("b1", para("b1", "y"))}})
	if !errors.Is(err, h.fail) {
		t.Fatalf("commit with a failing hook: %v", err)
	}
	info, _ := r.GetDoc(ctx, doc)
	if info.Head != "v1.r0" {
		t.Fatalf("head moved to %s", info.Head)
	}
}

// Locked sees the document as of its lock and its events wake subscribers.
func TestLockedSerializesWithChanges(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 2)
	wait := r.Hub().Wait(Stream(doc))
	err := r.Locked(ctx, doc, func(tx *DocTx) error {
		if tx.HeadLabel != "v1.r0" || tx.Unsealed {
			return fmt.Errorf("state %+v", tx)
		}
		b := r.DB().NewBatch()
		defer b.Close()
		if err := tx.Emit(b, "locked.event", 1, map[string]string{"k": "v"}); err != nil {
			return err
		}
		return r.DB().Apply(b, kv.Sync)
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-wait:
	default:
		t.Fatal("Locked did not wake the document's subscribers")
	}
	last, _ := stream.Last(r.DB(), Stream(doc))
	save(t, r, doc, 1, para("b0", "after"))
	evs, _ := stream.Read(r.DB(), Stream(doc), last-1, 0)
	if evs[0].Type != "locked.event" || evs[1].Seq != last+1 {
		t.Fatalf("events after Locked: %+v", evs)
	}
}

type flowdocOp = flowdoc.Op

func replaceBlock(id string, b flowdoc.Block) flowdoc.Op {
	return flowdoc.Op{Op: flowdoc.ReplaceBlock, BlockID: id, Block: &b}
}

func ptr[T any](v T) *T { return &v }
