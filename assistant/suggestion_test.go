package assistant

import (
	"slices"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
)

// bodyOf is the head body's canonical JSON.
func (w *world) bodyOf(doc string) string {
	w.tb.Helper()
	snap, err := w.repo.Show(ctx, doc, "")
	if err != nil {
		w.tb.Fatal(err)
	}
	return string(flowdoc.CanonicalJSON(snap.Body))
}

// acceptConflicts asserts an accept is refused as suggestion_conflicted,
// marks the suggestion conflicted and leaves the body and head alone.
func acceptConflicts(t *testing.T, w *world, doc string, sg Suggestion, reason string) {
	t.Helper()
	info, _ := w.repo.GetDoc(ctx, doc)
	body := w.bodyOf(doc)
	_, err := w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{})
	if codeOf(err) != CodeSuggestionConflicted || errs.KindOf(err) != errs.Conflict {
		t.Fatalf("accept of a stale suggestion: %v (code %q)", err, codeOf(err))
	}
	if reason != "" && !strings.Contains(err.Error(), reason) {
		t.Fatalf("the conflict must say why (%q): %v", reason, err)
	}
	after, _ := w.repo.GetDoc(ctx, doc)
	if after.Head != info.Head || w.bodyOf(doc) != body {
		t.Fatal("a conflicted accept changed the article")
	}
	if got := w.suggestion(sg.ID); got.Status != StatusConflicted || got.Conflict == nil {
		t.Fatalf("suggestion %s %+v", got.Status, got.Conflict)
	}
}

// Each of the four baseline checks of CommitChange refuses a stale
// accept on its own. The live hook is taken off for the first three so
// that accept itself must catch the staleness (as it must after a pack
// import, which moves heads without the hook). The version and
// fingerprint checks are those of a strict (whole-document) suggestion;
// a block-scoped one is carried over past them (TestCarriedOverAccept)
// but not past a changed block it watches.
func TestAcceptChecksEveryBaseline(t *testing.T) {
	t.Run("version", func(t *testing.T) {
		w := newWorld(t)
		doc := w.article(3, false)
		sg := w.suggest(doc, Scope{Kind: ScopeDocument})
		w.repo.SetHook(nil)
		// A new head with the same body: only the version check can see it.
		attrs := flowdoc.Attributes{Title: "Renamed"}
		dr, _ := w.repo.Draft(ctx, doc)
		if _, err := w.repo.SaveDraft(ctx, repo.SaveParams{Doc: doc, Actor: "author-a", BaseSeq: dr.Seq, Attrs: &attrs, Seal: objstore.ReasonManual}); err != nil {
			t.Fatal(err)
		}
		after, _ := w.repo.Draft(ctx, doc)
		if after.Fingerprint != sg.Base.Fingerprint || after.Head == sg.Base.Label {
			t.Fatalf("setup: fingerprint moved or head did not (%s)", after.Head)
		}
		acceptConflicts(t, w, doc, sg, "is not the head")
	})
	t.Run("fingerprint", func(t *testing.T) {
		w := newWorld(t)
		doc := w.article(3, false)
		sg := w.suggest(doc, Scope{Kind: ScopeDocument})
		w.repo.SetHook(nil)
		w.save(doc, para("p3", "another block typed meanwhile")) // same head, new body
		acceptConflicts(t, w, doc, sg, "fingerprint")
	})
	t.Run("watched block, carried over", func(t *testing.T) {
		w := newWorld(t)
		doc := w.article(3, false)
		sg := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p2"})
		hook := changeHook{w.svc}
		w.repo.SetHook(nil)
		w.save(doc, para("p2", "typed over the suggestion's block"))
		w.repo.SetHook(hook) // so that the refused accept marks it
		acceptConflicts(t, w, doc, sg, "target blocks changed")
	})
	t.Run("target block", func(t *testing.T) {
		w := newWorld(t)
		doc := w.article(3, false)
		sg := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p2"})
		// Version and fingerprint still hold; the recorded anchor content
		// does not (as if the suggestion had been made on another p2).
		sg.Base.Targets[0].Content = objstore.Sum(objstore.KindContent, flowdoc.EncodeContent(para("p2", "other")))
		sg.Watch[0].Content = sg.Base.Targets[0].Content
		b := w.db.NewBatch()
		kv.SetRecord(b, suggestionKey(sg.ID), sg)
		w.db.Apply(b, kv.Sync)
		b.Close()
		acceptConflicts(t, w, doc, sg, "target blocks changed")
	})
	t.Run("idempotency key", func(t *testing.T) {
		w := newWorld(t)
		doc := w.article(3, false)
		sg := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p2"})
		first, err := w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The same key through CommitChange itself, as a transport retry
		// racing the status would: the first result, nothing new.
		again, err := w.repo.CommitChange(ctx, repo.ChangeParams{Doc: doc, Actor: "author-a", Kind: objstore.KindAcceptSuggestion,
			BaseVersion: sg.Base.Version, BaseFingerprint: sg.Base.Fingerprint, Ops: confirmed(sg.Ops),
			IdempotencyKey: acceptKey(sg.ID), SuggestionID: sg.ID})
		if err != nil || again.Hash != first.Version.Hash {
			t.Fatalf("a repeated key: %+v %v, want %s", again.Label, err, first.Version.Label)
		}
		log, _ := w.repo.Log(ctx, doc, 0, 0)
		if len(log) != 2 {
			t.Fatalf("%d versions, want 2", len(log))
		}
	})
}

// Accepting twice returns the first result and creates one version.
func TestAcceptIsIdempotent(t *testing.T) {
	w := newWorld(t)
	doc := w.article(3, false)
	sg := w.suggest(doc, Scope{Kind: ScopeSelection, Block: "p1", Start: 0, End: 9})
	a1, err := w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a2, err := w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a1.Version.Hash != a2.Version.Hash || a1.Version.Label != "v1.r1" {
		t.Fatalf("%s then %s", a1.Version.Label, a2.Version.Label)
	}
	if log, _ := w.repo.Log(ctx, doc, 0, 0); len(log) != 2 {
		t.Fatalf("%d versions", len(log))
	}
	// The transaction names the suggestion; the txn is of kind accept_suggestion.
	e, err := w.svc.Explain(ctx, authorA, doc, "v1.r1")
	if err != nil || e.Txn.SuggestionID != sg.ID || e.Txn.Kind != objstore.KindAcceptSuggestion || e.Txn.IdempotencyKey != acceptKey(sg.ID) {
		t.Fatalf("txn %+v %v", e.Txn, err)
	}
	// Rejecting it now is refused.
	if _, err := w.svc.Reject(ctx, authorA, sg.ID, ""); codeOf(err) != CodeSuggestionDecided {
		t.Fatalf("reject after accept: %v", err)
	}
}

func TestDeleteNeedsConfirmation(t *testing.T) {
	w := newWorld(t)
	doc := w.article(3, false)
	w.model.answer = func(llmRequest) string { return `{"summary":"redundant","ops":[{"op":"delete_block","blockId":"p2"}]}` }
	sg := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p2"})
	if !sg.Deletes {
		t.Fatal("the suggestion does not say it deletes")
	}
	p, err := w.svc.Preview(ctx, authorA, sg.ID)
	if err != nil || len(p.Changes) != 1 || p.Changes[0].Kind != flowdoc.Deleted || !p.Current {
		t.Fatalf("preview %+v %v", p.Changes, err)
	}
	_, err = w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{})
	if codeOf(err) != CodeDeleteConfirmation || errs.KindOf(err) != errs.Invalid {
		t.Fatalf("unconfirmed delete: %v", err)
	}
	if info, _ := w.repo.GetDoc(ctx, doc); info.Head != "v1.r0" {
		t.Fatal("an unconfirmed delete wrote a version")
	}
	if w.suggestion(sg.ID).Status != StatusPending {
		t.Fatal("an unconfirmed delete changed the suggestion")
	}
	acc, err := w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{ConfirmDelete: true})
	if err != nil || acc.Version.Label != "v1.r1" {
		t.Fatalf("confirmed: %+v %v", acc.Version, err)
	}
	if strings.Contains(w.bodyOf(doc), `"p2"`) {
		t.Fatal("p2 is still there")
	}
}

// A pending suggestion is conflicted the moment a change moves its
// baseline — a draft save, another accept, a restore — with an event.
func TestLiveInvalidation(t *testing.T) {
	conflictedBy := func(t *testing.T, w *world, doc string, cursor uint64, sg Suggestion, by string, blocks []string) {
		t.Helper()
		got := w.suggestion(sg.ID)
		if got.Status != StatusConflicted || got.Conflict == nil || got.Conflict.By != by || !slices.Equal(got.Conflict.Blocks, blocks) {
			t.Fatalf("suggestion %s conflict %+v, want by %s blocks %v", got.Status, got.Conflict, by, blocks)
		}
		for _, e := range w.docEvents(doc, cursor) {
			if e.Type != EventSuggestionConflicted {
				continue
			}
			var se SuggestionEvent
			kv.Unmarshal(e.Data, &se)
			if se.ID == sg.ID && se.Status == StatusConflicted && se.By == by && slices.Equal(se.Blocks, blocks) {
				return
			}
		}
		t.Fatalf("no suggestion.conflicted event for %s in %v", sg.ID, types(w.docEvents(doc, cursor)))
	}
	t.Run("draft save", func(t *testing.T) {
		w := newWorld(t)
		doc := w.article(3, false)
		sg := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p2"})
		cur := w.lastDocEvent(doc)
		w.save(doc, para("p2", "the author rewrote it by hand"))
		conflictedBy(t, w, doc, cur, sg, repo.ChangeDraft, []string{"p2"})
		acceptConflicts(t, w, doc, sg, "p2")
	})
	t.Run("draft save after saves without suggestions", func(t *testing.T) {
		// Saves of a document without pending suggestions are remembered
		// as such (no scan); a suggestion made after them must still be
		// found by the next save.
		w := newWorld(t)
		doc := w.article(3, false)
		w.save(doc, para("p1", "typed before any suggestion"))
		w.save(doc, para("p1", "typed again before any suggestion"))
		sg := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p2"})
		cur := w.lastDocEvent(doc)
		w.save(doc, para("p2", "the author rewrote it by hand"))
		conflictedBy(t, w, doc, cur, sg, repo.ChangeDraft, []string{"p2"})
	})
	t.Run("draft save elsewhere", func(t *testing.T) {
		// A block-scoped suggestion survives edits of blocks it does not
		// watch: no conflict, no event.
		w := newWorld(t)
		doc := w.article(3, false)
		sg := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p2"})
		cur := w.lastDocEvent(doc)
		w.save(doc, para("p3", "another block"))
		w.save(doc, para("p9", "a new block"))
		if _, _, err := w.repo.Checkpoint(ctx, doc, objstore.ReasonManual, "author-a", ""); err != nil {
			t.Fatal(err)
		}
		if got := w.suggestion(sg.ID); got.Status != StatusPending {
			t.Fatalf("an edit elsewhere conflicted the suggestion: %+v", got.Conflict)
		}
		if evs := types(w.docEvents(doc, cur)); slices.Contains(evs, EventSuggestionConflicted) {
			t.Fatalf("suggestion.conflicted fired for an edit elsewhere: %v", evs)
		}
	})
	t.Run("whole document stays strict", func(t *testing.T) {
		w := newWorld(t)
		doc := w.article(3, false)
		sg := w.suggest(doc, Scope{Kind: ScopeDocument})
		cur := w.lastDocEvent(doc)
		w.save(doc, para("p3", "another block")) // any change conflicts it
		conflictedBy(t, w, doc, cur, sg, repo.ChangeDraft, []string{"p3"})
		acceptConflicts(t, w, doc, sg, "")
	})
	t.Run("attributes only", func(t *testing.T) {
		w := newWorld(t)
		doc := w.article(3, false)
		sg := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p2"})
		dr, _ := w.repo.Draft(ctx, doc)
		attrs := flowdoc.Attributes{Title: "Only the title"}
		if _, err := w.repo.SaveDraft(ctx, repo.SaveParams{Doc: doc, Actor: "author-a", BaseSeq: dr.Seq, Attrs: &attrs}); err != nil {
			t.Fatal(err)
		}
		if got := w.suggestion(sg.ID); got.Status != StatusPending {
			t.Fatalf("an attributes-only save conflicted the suggestion: %+v", got.Conflict)
		}
		if _, err := w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{}); err != nil {
			t.Fatalf("accept after an attributes-only save: %v", err)
		}
	})
	t.Run("another accept", func(t *testing.T) {
		w := newWorld(t)
		doc := w.article(3, false)
		a := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p2"})
		b := w.suggest(doc, Scope{Kind: ScopeSection, From: "p1", To: "p3"})
		cur := w.lastDocEvent(doc)
		if _, err := w.svc.Accept(ctx, authorA, a.ID, AcceptOptions{}); err != nil {
			t.Fatal(err)
		}
		conflictedBy(t, w, doc, cur, b, objstore.KindAcceptSuggestion, []string{"p2"})
		evs := types(w.docEvents(doc, cur))
		if !slices.Contains(evs, EventSuggestionAccepted) || !slices.Contains(evs, repo.EventVersionCreated) {
			t.Fatalf("events %v", evs)
		}
	})
	t.Run("restore", func(t *testing.T) {
		w := newWorld(t)
		doc := w.article(3, false)
		w.save(doc, para("p1", "second state"))
		w.repo.Checkpoint(ctx, doc, objstore.ReasonManual, "author-a", "")
		sg := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p1"})
		other := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p3"})
		cur := w.lastDocEvent(doc)
		if _, err := w.repo.Restore(ctx, doc, "v1.r0", "author-a"); err != nil {
			t.Fatal(err)
		}
		conflictedBy(t, w, doc, cur, sg, objstore.KindRestore, []string{"p1"})
		if got := w.suggestion(other.ID); got.Status != StatusPending {
			t.Fatalf("a restore that left p3 alone conflicted its suggestion: %+v", got.Conflict)
		}
	})
	t.Run("during generation", func(t *testing.T) {
		w := newWorld(t)
		doc := w.article(3, false)
		w.model.hold = make(chan struct{})
		w.model.started = make(chan struct{}, 1)
		q, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p2"}, Instruction: "x"})
		if err != nil {
			t.Fatal(err)
		}
		<-w.model.started
		w.save(doc, para("p2", "typed while the model answered"))
		close(w.model.hold)
		run := w.wait(q.Run.ID)
		sg := w.suggestion(run.Suggestion)
		if sg.Status != StatusConflicted || sg.Conflict.By != "generation" {
			t.Fatalf("a suggestion born stale is %s (%+v)", sg.Status, sg.Conflict)
		}
		if pend, _ := kv.Keys(w.db, suggPendPrefix(doc), 0); len(pend) != 0 {
			t.Fatal("a conflicted suggestion is in the pending index")
		}
		if blk, _ := kv.Keys(w.db, suggBlkPrefix(doc, "p2"), 0); len(blk) != 0 {
			t.Fatal("a conflicted suggestion is in the block index")
		}
	})
	t.Run("during generation elsewhere", func(t *testing.T) {
		w := newWorld(t)
		doc := w.article(3, false)
		w.model.hold = make(chan struct{})
		w.model.started = make(chan struct{}, 1)
		q, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p2"}, Instruction: "x"})
		if err != nil {
			t.Fatal(err)
		}
		<-w.model.started
		w.save(doc, para("p3", "typed elsewhere while the model answered"))
		close(w.model.hold)
		run := w.wait(q.Run.ID)
		if sg := w.suggestion(run.Suggestion); sg.Status != StatusPending {
			t.Fatalf("a suggestion whose blocks did not change is %s (%+v)", sg.Status, sg.Conflict)
		}
	})
}

func TestRejectWritesAnObservation(t *testing.T) {
	w := newWorld(t)
	doc := w.article(2, false)
	sg := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p1"})
	cur := w.lastDocEvent(doc)
	got, err := w.svc.Reject(ctx, authorA, sg.ID, "too formal")
	if err != nil || got.Status != StatusRejected || got.RejectReason != "too formal" || got.DecidedBy != "author-a" {
		t.Fatalf("reject %+v %v", got, err)
	}
	if again, err := w.svc.Reject(ctx, authorA, sg.ID, ""); err != nil || again.Status != StatusRejected {
		t.Fatalf("reject twice: %v", err)
	}
	obs, _ := w.svc.Observations(ctx, sg.ID)
	if len(obs) != 1 || obs[0].Kind != ObsRejected || obs[0].Reason != "too formal" || obs[0].Run != sg.Run {
		t.Fatalf("observations %+v", obs)
	}
	if evs := types(w.docEvents(doc, cur)); !slices.Equal(evs, []string{EventSuggestionRejected}) {
		t.Fatalf("events %v", evs)
	}
	if info, _ := w.repo.GetDoc(ctx, doc); info.Head != "v1.r0" {
		t.Fatal("a rejection changed the article")
	}
	if _, err := w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{}); codeOf(err) != CodeSuggestionDecided {
		t.Fatalf("accept after reject: %v", err)
	}
}

// A block an accepted suggestion produced and the author then changed
// before the next checkpoint gets an edited_after_accept observation with
// both contents' hashes; untouched produced blocks get none.
func TestEditedAfterAccept(t *testing.T) {
	w := newWorld(t)
	doc := w.article(3, false)
	sg := w.suggest(doc, Scope{Kind: ScopeSection, From: "p1", To: "p2"})
	acc, err := w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obs, _ := w.svc.Observations(ctx, sg.ID)
	if len(obs) != 1 || obs[0].Kind != ObsAccepted || obs[0].Version != acc.Version.Label {
		t.Fatalf("after accept %+v", obs)
	}
	produced, _, _ := w.repo.BlockAt(doc, "p1")
	w.save(doc, para("p1", "the author's own wording"))
	w.save(doc, para("p1", "the author's final wording"))
	if obs, _ := w.svc.Observations(ctx, sg.ID); len(obs) != 1 {
		t.Fatal("an observation before the checkpoint")
	}
	v, _, err := w.repo.Seal(ctx, doc, objstore.ReasonIdle, "author-a")
	if err != nil {
		t.Fatal(err)
	}
	final, _, _ := w.repo.BlockAt(doc, "p1")
	obs, _ = w.svc.Observations(ctx, sg.ID)
	if len(obs) != 2 {
		t.Fatalf("observations %+v", obs)
	}
	e := obs[1]
	if e.Kind != ObsEditedAfterAccept || e.Block != "p1" || e.Before != produced || e.After != final || e.Version != v.Label || e.Before == e.After {
		t.Fatalf("edited_after_accept %+v (produced %s final %s)", e, produced.Short(), final.Short())
	}
	// The window closed: later edits record nothing more.
	w.save(doc, para("p2", "later"))
	w.repo.Seal(ctx, doc, objstore.ReasonIdle, "author-a")
	if obs, _ := w.svc.Observations(ctx, sg.ID); len(obs) != 2 {
		t.Fatalf("observations after the window: %+v", obs)
	}
}

func TestPreviewShowsBlockAndWordDiff(t *testing.T) {
	w := newWorld(t)
	doc := w.article(3, false)
	sg := w.suggest(doc, Scope{Kind: ScopeSelection, Block: "p2", Start: 0, End: 9})
	p, err := w.svc.Preview(ctx, authorA, sg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 || p.Changes[0].BlockID != "p2" || p.Changes[0].Kind != flowdoc.Modified || !p.Current {
		t.Fatalf("changes %+v", p.Changes)
	}
	var ins, del string
	for _, we := range p.Changes[0].Words {
		switch we.Op {
		case flowdoc.OpInsert:
			ins += we.Text
		case flowdoc.OpDelete:
			del += we.Text
		}
	}
	if ins != "EDITED" || del != "Paragraph" {
		t.Fatalf("word diff inserts %q deletes %q", ins, del)
	}
	if got := flowdoc.PlainText(p.Candidate.Blocks[1].RichText); got != "EDITED 2 says something about 世界 and 🌍." {
		t.Fatalf("candidate %q", got)
	}
	// After an edit elsewhere the preview shows the current context:
	// the draft with the operation applied, diffed against the draft.
	w.save(doc, para("p3", "moved on"))
	p, err = w.svc.Preview(ctx, authorA, sg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Current || !p.CarriedOver || p.Suggestion.Status != StatusPending || !p.Unsealed {
		t.Fatalf("preview after an edit elsewhere: current %v carried %v status %s unsealed %v", p.Current, p.CarriedOver, p.Suggestion.Status, p.Unsealed)
	}
	if got := flowdoc.PlainText(p.Candidate.Blocks[2].RichText); got != "moved on" {
		t.Fatalf("the carried-over preview lost the edit elsewhere: p3 %q", got)
	}
	if len(p.Changes) != 1 || p.Changes[0].BlockID != "p2" {
		t.Fatalf("carried-over changes %+v, want p2 only", p.Changes)
	}
	w.save(doc, para("p2", "the author took p2 back"))
	if p, _ := w.svc.Preview(ctx, authorA, sg.ID); p.Current || p.CarriedOver || p.Suggestion.Status != StatusConflicted {
		t.Fatalf("preview after a change of its block: current %v status %s", p.Current, p.Suggestion.Status)
	}
}

// A block-scoped suggestion accepted after edits elsewhere (a draft save
// and a checkpoint) is carried over: the new revision is the current
// head with the operation applied and the edits kept; the transaction
// records both baselines; the suggestion, its event and explain say so.
func TestCarriedOverAccept(t *testing.T) {
	w := newWorld(t)
	doc := w.article(3, false)
	sg := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p2"})
	w.save(doc, para("p3", "edited elsewhere, checkpointed"))
	cp, _, err := w.repo.Checkpoint(ctx, doc, objstore.ReasonManual, "author-a", "")
	if err != nil {
		t.Fatal(err)
	}
	w.save(doc, para("p1", "edited elsewhere, unsealed"))
	cur := w.lastDocEvent(doc)
	acc, err := w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{})
	if err != nil {
		t.Fatalf("accept after edits elsewhere: %v", err)
	}
	snap, err := w.repo.Show(ctx, doc, acc.Version.Label)
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(snap.Body.Blocks))
	for i, b := range snap.Body.Blocks {
		texts[i] = flowdoc.PlainText(b.RichText)
	}
	base, _ := w.repo.Show(ctx, doc, "v1.r0")
	want, err := flowdoc.Apply(base.Body, sg.Ops, flowdoc.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if texts[0] != "edited elsewhere, unsealed" || texts[2] != "edited elsewhere, checkpointed" || texts[1] != flowdoc.PlainText(want.Blocks[1].RichText) || texts[1] == flowdoc.PlainText(base.Body.Blocks[1].RichText) {
		t.Fatalf("the carried-over revision %s: %q", acc.Version.Label, texts)
	}
	if acc.Version.Label != "v1.r2" {
		t.Fatalf("the carried-over accept is %s, want the revision v1.r2 after the checkpoint %s", acc.Version.Label, cp.Label)
	}
	c := acc.Suggestion.Carried
	if c == nil || c.From.Label != "v1.r0" || c.From.Version != sg.Base.Version || c.To.Label != cp.Label || c.To.Version != cp.Hash {
		t.Fatalf("suggestion carried %+v, want from v1.r0 to %s", c, cp.Label)
	}
	v, _ := w.repo.Objects().GetVersion(acc.Version.Hash)
	tx, _ := w.repo.Objects().GetTxn(v.Txn)
	if tx.OrigBase != sg.Base.Version || tx.OrigBaseFP != sg.Base.Fingerprint || tx.BaseVersion != cp.Hash || tx.BaseFingerprint == sg.Base.Fingerprint {
		t.Fatalf("txn bases: orig %s/%s, base %s/%s", tx.OrigBase.Short(), tx.OrigBaseFP.Short(), tx.BaseVersion.Short(), tx.BaseFingerprint.Short())
	}
	found := false
	for _, e := range w.docEvents(doc, cur) {
		var se SuggestionEvent
		if e.Type == EventSuggestionAccepted && kv.Unmarshal(e.Data, &se) == nil && se.ID == sg.ID && se.CarriedFrom == "v1.r0" {
			found = true
		}
	}
	if !found {
		t.Fatal("no suggestion.accepted event saying it was carried over from v1.r0")
	}
	e, err := w.svc.Explain(ctx, authorA, doc, acc.Version.Label)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.Note, "carried over from v1.r0 to "+cp.Label) || e.Txn.OrigBase != sg.Base.Version || e.Suggestion.Carried == nil {
		t.Fatalf("explain: note %q, orig base %s", e.Note, e.Txn.OrigBase.Short())
	}
	// A suggestion accepted on its own baseline says nothing of the kind.
	w2 := newWorld(t)
	doc2 := w2.article(3, false)
	sg2 := w2.suggest(doc2, Scope{Kind: ScopeBlock, Block: "p2"})
	acc2, err := w2.svc.Accept(ctx, authorA, sg2.ID, AcceptOptions{})
	if err != nil || acc2.Suggestion.Carried != nil {
		t.Fatalf("accept on the baseline: carried %+v, %v", acc2.Suggestion.Carried, err)
	}
	v2, _ := w2.repo.Objects().GetVersion(acc2.Version.Hash)
	if tx2, _ := w2.repo.Objects().GetTxn(v2.Txn); !tx2.OrigBase.IsZero() {
		t.Fatal("a plain accept's transaction names an original baseline")
	}
}

// A checkpoint of hand edits records one manual_edit observation of the
// blocks it changed, however many saves made them; a produced block the
// author changed is left to edited_after_accept, and a checkpoint that
// changed no block records none.
func TestManualEditsAreObservedOncePerCheckpoint(t *testing.T) {
	w := newWorld(t)
	doc := w.article(3, false)
	before, _, _ := w.repo.BlockAt(doc, "p2")
	w.save(doc, para("p2", "typed"))
	w.save(doc, para("p2", "typed by hand"))
	w.save(doc, para("p3", "also by hand"))
	if _, ok, _ := w.svc.ManualObservation(ctx, doc, "v1.r1"); ok {
		t.Fatal("a draft save recorded an observation")
	}
	v, _, err := w.repo.Seal(ctx, doc, objstore.ReasonIdle, "author-a")
	if err != nil {
		t.Fatal(err)
	}
	after, _, _ := w.repo.BlockAt(doc, "p2")
	o, ok, err := w.svc.ManualObservation(ctx, doc, v.Label)
	if err != nil || !ok {
		t.Fatalf("no manual_edit for %s: %v", v.Label, err)
	}
	if o.Kind != ObsManualEdit || o.Doc != doc || o.Actor != "author-a" || o.Suggestion != "" || o.Personalization.Persona != nil ||
		len(o.Edits) != 2 || o.Edits[0] != (ObservedEdit{Block: "p2", Before: before, After: after}) || o.Edits[1].Block != "p3" {
		t.Fatalf("manual_edit %+v", o)
	}
	e, err := w.svc.Explain(ctx, authorA, doc, v.Label)
	if err != nil || !e.ByHand || len(e.Observations) != 1 || e.Observations[0].Kind != ObsManualEdit {
		t.Fatalf("explain of a hand checkpoint: %+v %v", e.Observations, err)
	}

	// After an accept, the produced block the author changed is an
	// edited_after_accept; the other hand edit is the manual_edit.
	sg := w.suggest(doc, Scope{Kind: ScopeBlock, Block: "p1"})
	if _, err := w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{}); err != nil {
		t.Fatal(err)
	}
	w.save(doc, para("p1", "the author's own wording"), para("p3", "p3 again"))
	v, _, err = w.repo.Seal(ctx, doc, objstore.ReasonIdle, "author-a")
	if err != nil {
		t.Fatal(err)
	}
	o, ok, _ = w.svc.ManualObservation(ctx, doc, v.Label)
	if !ok || len(o.Edits) != 1 || o.Edits[0].Block != "p3" {
		t.Fatalf("manual_edit after an accept %+v", o)
	}
	obs, _ := w.svc.Observations(ctx, sg.ID)
	if len(obs) != 2 || obs[1].Kind != ObsEditedAfterAccept || obs[1].Block != "p1" {
		t.Fatalf("observations of the suggestion %+v", obs)
	}

	// Attributes alone: no manual_edit.
	dr, _ := w.repo.Draft(ctx, doc)
	at := dr.Attrs
	at.Title = "A new title"
	if _, err := w.repo.SaveDraft(ctx, repo.SaveParams{Doc: doc, Actor: "author-a", BaseSeq: dr.Seq, Attrs: &at}); err != nil {
		t.Fatal(err)
	}
	if v, _, err = w.repo.Seal(ctx, doc, objstore.ReasonIdle, "author-a"); err != nil {
		t.Fatal(err)
	}
	if o, ok, _ := w.svc.ManualObservation(ctx, doc, v.Label); ok {
		t.Fatalf("a checkpoint of attributes recorded %+v", o)
	}
}
