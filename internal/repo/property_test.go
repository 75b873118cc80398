package repo

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/objstore"
)

// texts stress code-point offsets in the stored history.
var texts = []string{"plain words", "我们今天去公园散步", "emoji 👋🏽 and 👨‍👩‍👧", "e\u0301 combining", "𠮷野家", "🇯🇵 flag"}

func randBlock(r *rand.Rand, id string) flowdoc.Block {
	t := texts[r.IntN(len(texts))] + fmt.Sprint(r.IntN(1000))
	switch r.IntN(5) {
	case 0:
		return flowdoc.Block{ID: id, Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: 1 + r.IntN(4)}, RichText: []flowdoc.Run{{Text: t}}}
	case 1:
		return flowdoc.Block{ID: id, Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Language: "go", Text: "x := " + t}}
	case 2:
		return flowdoc.Block{ID: id, Type: flowdoc.Quote, RichText: []flowdoc.Run{{Text: t, Marks: []flowdoc.Mark{flowdoc.Italic}}}}
	default:
		return flowdoc.Block{ID: id, Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: t}, {Text: " more", Marks: []flowdoc.Mark{flowdoc.Bold}}}}
	}
}

// randOp returns a random operation on d that should apply.
func randOp(r *rand.Rand, d flowdoc.Document, next *int) flowdoc.Op {
	target := d.Blocks[r.IntN(len(d.Blocks))]
	*next++
	id := fmt.Sprintf("n%d", *next)
	switch k := r.IntN(5); {
	case k == 0 && target.Type.IsText():
		n := len([]rune(flowdoc.PlainText(target.RichText)))
		s := r.IntN(n + 1)
		e := s + r.IntN(n-s+1)
		return flowdoc.Op{Op: flowdoc.ReplaceSelection, BlockID: target.ID, Start: s, End: e, RichText: []flowdoc.Run{{Text: texts[r.IntN(len(texts))]}}}
	case k == 1:
		b := randBlock(r, "")
		return flowdoc.Op{Op: flowdoc.InsertAfter, BlockID: target.ID, Blocks: []flowdoc.Block{withID(b, id)}}
	case k == 2:
		b := randBlock(r, "")
		return flowdoc.Op{Op: flowdoc.InsertBefore, BlockID: target.ID, Blocks: []flowdoc.Block{withID(b, id)}}
	case k == 3 && len(d.Blocks) > 1:
		return flowdoc.Op{Op: flowdoc.DeleteBlock, BlockID: target.ID, Confirm: true}
	default:
		b := randBlock(r, target.ID)
		return flowdoc.Op{Op: flowdoc.ReplaceBlock, BlockID: target.ID, Block: &b}
	}
}

func withID(b flowdoc.Block, id string) flowdoc.Block { b.ID = id; return b }

// Random documents and operation sequences: every change committed
// through CommitChange, sealed and shown again is byte-identical (in
// canonical form) to what flowdoc.Apply produced; restoring any version
// materializes exactly that version's canonical content.
func TestPropertyApplyCommitShowRestore(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	for seed := 0; seed < rounds; seed++ {
		rnd := rand.New(rand.NewPCG(uint64(seed), 7))
		r := newRepo(t)
		body := flowdoc.Document{SchemaVersion: 1}
		for i := 0; i < 3+rnd.IntN(10); i++ {
			body.Blocks = append(body.Blocks, randBlock(rnd, fmt.Sprintf("b%d", i)))
		}
		v, err := r.CreateDoc(ctx, CreateParams{Owner: "ana", Attrs: flowdoc.Attributes{Title: "p"}, Body: body})
		if err != nil {
			t.Fatalf("seed %d: create: %v", seed, err)
		}
		doc := v.Doc
		want := map[string][]byte{"v1.r0": flowdoc.CanonicalJSON(body)}
		next := 0
		for step := 0; step < 8; step++ {
			d, err := r.Draft(ctx, doc)
			if err != nil {
				t.Fatal(err)
			}
			ops := []flowdoc.Op{randOp(rnd, d.Body, &next)}
			expect, err := flowdoc.Apply(d.Body, ops, flowdoc.DefaultLimits)
			if err != nil {
				continue // an op the document refuses (e.g. selection on a heading that became code)
			}
			targets := map[string]objstore.ID{}
			for _, id := range flowdoc.TargetBlocks(d.Body, ops) {
				for _, b := range d.Body.Blocks {
					if b.ID == id {
						targets[id] = objstore.ID(flowdoc.ContentHash(b))
					}
				}
			}
			v, err := r.CommitChange(ctx, ChangeParams{Doc: doc, Actor: "ana", BaseVersion: d.HeadID,
				BaseFingerprint: d.Fingerprint, TargetBlocks: targets, Ops: ops})
			if err != nil {
				t.Fatalf("seed %d step %d: commit %+v: %v", seed, step, ops, err)
			}
			s, err := r.Show(ctx, doc, v.Label)
			if err != nil {
				t.Fatal(err)
			}
			got := flowdoc.CanonicalJSON(s.Body)
			if !bytes.Equal(got, flowdoc.CanonicalJSON(expect)) {
				t.Fatalf("seed %d step %d: %s shows\n%s\nwant\n%s", seed, step, v.Label, got, flowdoc.CanonicalJSON(expect))
			}
			if s.Info.Fingerprint != flowdoc.FingerprintOf(expect) {
				t.Fatalf("seed %d step %d: fingerprint mismatch", seed, step)
			}
			want[v.Label] = got
		}
		for label, canon := range want {
			v, err := r.Restore(ctx, doc, label, "ana")
			if err != nil {
				t.Fatalf("seed %d: restore %s: %v", seed, label, err)
			}
			s, _ := r.Show(ctx, doc, v.Label)
			if !bytes.Equal(flowdoc.CanonicalJSON(s.Body), canon) {
				t.Fatalf("seed %d: restore of %s is not byte-identical", seed, label)
			}
		}
		if rep, err := r.Fsck(ctx, FsckOptions{}); err != nil || !rep.OK {
			t.Fatalf("seed %d: fsck %+v %v", seed, rep.Problems, err)
		}
	}
}

// A whole-document candidate that changes a complex block is refused and
// writes nothing.
func TestReplaceDocumentGuard(t *testing.T) {
	r := newRepo(t)
	body := flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
		para("p1", "text"),
		{ID: "c1", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Language: "go", Text: "x := 1"}},
	}}
	v, err := r.CreateDoc(ctx, CreateParams{Owner: "ana", Attrs: flowdoc.Attributes{Title: "g"}, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := r.Draft(ctx, v.Doc)
	cand := body.Clone()
	cand.Blocks[1].Attrs.Text = "x := 2"
	_, err = r.CommitChange(ctx, ChangeParams{Doc: v.Doc, Actor: "ai", BaseVersion: d.HeadID, BaseFingerprint: d.Fingerprint,
		Ops: []flowdoc.Op{{Op: flowdoc.ReplaceDocument, Document: &cand}}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("candidate changing a code block: %v, want invalid", err)
	}
	cand = body.Clone()
	cand.Blocks[0].RichText = []flowdoc.Run{{Text: "reworked text"}}
	nv, err := r.CommitChange(ctx, ChangeParams{Doc: v.Doc, Actor: "ai", BaseVersion: d.HeadID, BaseFingerprint: d.Fingerprint,
		Ops: []flowdoc.Op{{Op: flowdoc.ReplaceDocument, Document: &cand}}})
	if err != nil || nv.Label != "v2.r0" {
		t.Fatalf("text-only candidate = %+v %v, want a new major v2.r0", nv, err)
	}
}
