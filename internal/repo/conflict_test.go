package repo

import (
	"errors"
	"slices"
	"testing"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/objstore"
)

// TestConflictsNameTheirCheck: every stale baseline is a
// *folio.ConflictError that says which check failed and the values it
// compared, so that HTTP and WebSocket can send them as fields.
func TestConflictsNameTheirCheck(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 3)
	first := save(t, r, doc, 1, para("b0", "edited"))
	if _, err := r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: "ana", BaseSeq: first.Seq,
		Attrs: &flowdoc.Attributes{Title: "New title"}}); err != nil {
		t.Fatal(err)
	}
	d, err := r.Draft(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	stale := para("b0", "stale")
	after := "b9"
	b1 := d.Body.Blocks[1]
	b1id := objstore.ID(flowdoc.ContentHash(b1))
	edit := para("b1", "accepted")
	op := []flowdoc.Op{{Op: flowdoc.ReplaceBlock, BlockID: "b1", Block: &edit}}
	v1, err := r.Show(ctx, doc, "v1.r0")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		err   error
		check folio.Check
		want  func(ce *folio.ConflictError) bool
	}{
		{"stale block", func() error {
			_, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: 1, Changes: []DraftChange{{Op: ChangeUpsert, Block: &stale}}})
			return err
		}(), folio.CheckBlocks, func(ce *folio.ConflictError) bool {
			return ce.Seq == d.Seq && ce.BaseSeq == 1 && len(ce.Blocks) == 1 && ce.Blocks[0].ID == "b0" &&
				ce.Reason == "blocks changed since baseSeq"
		}},
		{"stale attributes", func() error {
			_, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: first.Seq, Attrs: &flowdoc.Attributes{Title: "Other"}})
			return err
		}(), folio.CheckAttrs, func(ce *folio.ConflictError) bool {
			return ce.Seq == d.Seq && ce.BaseSeq == first.Seq && len(ce.Blocks) == 0
		}},
		{"missing anchor", func() error {
			_, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: d.Seq,
				Changes: []DraftChange{{Op: ChangeUpsert, Block: &edit, After: &after}}})
			return err
		}(), folio.CheckMissingBlock, func(ce *folio.ConflictError) bool {
			return ce.Missing == "b9" && ce.Doc == doc && ce.Reason == `changes[0].after: block "b9" is not in the draft`
		}},
		{"base version", func() error {
			_, err := r.CommitChange(ctx, ChangeParams{Doc: doc, Kind: objstore.KindAcceptSuggestion,
				BaseVersion: objstore.ID{1}, BaseFingerprint: d.Fingerprint, Ops: op})
			return err
		}(), folio.CheckBaseVersion, func(ce *folio.ConflictError) bool {
			return ce.Expected == (objstore.ID{1}).Short() && ce.Actual == d.Head
		}},
		{"fingerprint", func() error {
			_, err := r.CommitChange(ctx, ChangeParams{Doc: doc, Kind: objstore.KindAcceptSuggestion,
				BaseVersion: d.HeadID, BaseFingerprint: v1.Info.Fingerprint, Ops: op})
			return err
		}(), folio.CheckFingerprint, func(ce *folio.ConflictError) bool {
			return ce.Expected == v1.Info.Fingerprint.String() && ce.Actual == d.Fingerprint.String() && ce.Seq == d.Seq
		}},
		{"target blocks", func() error {
			_, err := r.CommitChange(ctx, ChangeParams{Doc: doc, Kind: objstore.KindAcceptSuggestion,
				BaseVersion: d.HeadID, BaseFingerprint: d.Fingerprint, Ops: op,
				TargetBlocks: map[string]objstore.ID{"b1": b1id, "b0": objstore.ID(flowdoc.ContentHash(para("b0", "paragraph 0")))}})
			return err
		}(), folio.CheckTargetBlocks, func(ce *folio.ConflictError) bool {
			return len(ce.Blocks) == 1 && ce.Blocks[0].ID == "b0" && flowdoc.PlainText(ce.Blocks[0].Block.RichText) == "edited"
		}},
	}
	for _, tt := range tests {
		var ce *folio.ConflictError
		if !errors.As(tt.err, &ce) || !errors.Is(tt.err, ErrConflict) {
			t.Errorf("%s: %v, want a *folio.ConflictError", tt.name, tt.err)
			continue
		}
		if ce.Check != tt.check || ce.Doc != doc || !tt.want(ce) {
			t.Errorf("%s: %+v, want check %s and its fields", tt.name, ce, tt.check)
		}
	}
	// Nothing was written by any of them.
	after2, err := r.Draft(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	if after2.Seq != d.Seq || !slices.EqualFunc(after2.Body.Blocks, d.Body.Blocks, func(a, b flowdoc.Block) bool {
		return flowdoc.ContentHash(a) == flowdoc.ContentHash(b)
	}) {
		t.Fatalf("a conflict changed the draft: seq %d -> %d", d.Seq, after2.Seq)
	}
}
