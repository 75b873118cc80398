package repo

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
)

// pngBytes is a w×h PNG whose pixels depend on seed (distinct assets).
func pngBytes(t testing.TB, w, h int, seed uint8) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	x := uint32(seed) + 1
	for i := range img.Pix {
		x ^= x << 13 // xorshift: noise that PNG cannot compress
		x ^= x >> 17
		x ^= x << 5
		img.Pix[i] = uint8(x)
	}
	img.Set(0, 0, color.RGBA{seed, 1, 2, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestPutAssetSniffsAndRecords(t *testing.T) {
	r := newRepo(t)
	data := pngBytes(t, 3, 2, 1)
	info, err := r.PutAsset(ctx, data, "../dir/chart.png", "ana")
	if err != nil {
		t.Fatal(err)
	}
	if info.MIME != "image/png" || info.Width != 3 || info.Height != 2 || info.Size != len(data) || info.Name != "chart.png" {
		t.Fatalf("info = %+v", info)
	}
	if info.URL != "folio-asset:"+info.Hash.String() {
		t.Fatalf("url = %s", info.URL)
	}
	a, got, err := r.Asset(ctx, info.Hash)
	if err != nil || !bytes.Equal(a.Data, data) || got.Name != "chart.png" {
		t.Fatalf("Asset = %v %+v %v", a != nil, got, err)
	}
	// The same bytes again are the same asset.
	again, err := r.PutAsset(ctx, data, "other.png", "bo")
	if err != nil || again.Hash != info.Hash {
		t.Fatalf("second upload = %v %v", again.Hash, err)
	}
	for _, user := range []string{"ana", "bo"} {
		if ok, err := r.MayReadAsset(info.Hash, user); !ok || err != nil {
			t.Fatalf("uploader %s may not read: %v", user, err)
		}
	}
	if ok, _ := r.MayReadAsset(info.Hash, "cy"); ok {
		t.Fatal("another user may read an asset she neither uploaded nor references")
	}
	var missing objstore.ID
	missing[0] = 1
	if _, _, err := r.Asset(ctx, missing); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing asset: %v", err)
	}
}

func TestPutAssetLimits(t *testing.T) {
	dir := t.TempDir()
	if err := Init(dir); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, Options{MaxAsset: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	big := pngBytes(t, 64, 64, 3)
	if _, err := r.PutAsset(ctx, big, "big.png", "ana"); errs.KindOf(err) != errs.TooLarge {
		t.Fatalf("a %d-byte asset over a 1000-byte limit: %v", len(big), err)
	}
	if _, err := r.PutAsset(ctx, []byte("<svg xmlns='http://www.w3.org/2000/svg'/>"), "x.svg", "ana"); errs.KindOf(err) != errs.Unsupported {
		t.Fatalf("svg: %v", err)
	}
}

func TestSaveReferencingAssets(t *testing.T) {
	r := newRepo(t)
	info, err := r.PutAsset(ctx, pngBytes(t, 2, 2, 5), "a.png", "ana")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := r.PutAsset(ctx, pngBytes(t, 2, 2, 6), "b.png", "cy")
	if err != nil {
		t.Fatal(err)
	}
	doc := create(t, r, 2)
	img := flowdoc.Block{ID: "m1", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Kind: "image", Src: info.URL, Alt: "a"}}
	save(t, r, doc, 1, img)
	// A save naming an asset the store lacks is refused, and one naming
	// an asset of another user's alike: a hash is not a key.
	var unknown objstore.ID
	unknown[31] = 9
	bad := flowdoc.Block{ID: "m2", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Kind: "image", Src: flowdoc.AssetURL(unknown.String())}}
	_, err = r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: "ana", BaseSeq: 2, Changes: []DraftChange{{Op: ChangeUpsert, Block: &bad}}})
	if errs.CodeOf(err) != CodeUnknownAsset {
		t.Fatalf("save of an unknown asset: %v", err)
	}
	other := flowdoc.Block{ID: "m3", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Kind: "image", Src: theirs.URL}}
	_, err2 := r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: "ana", BaseSeq: 2, Changes: []DraftChange{{Op: ChangeUpsert, Block: &other}}})
	if errs.CodeOf(err2) != CodeUnknownAsset || strings.Replace(err2.Error(), theirs.Hash.Short(), unknown.Short(), 1) != strings.Replace(err.Error(), "m2", "m3", 1) {
		t.Fatalf("save of another user's asset: %v (unknown: %v)", err2, err)
	}
	// A new owner reads the document's assets.
	if _, err := r.Chown(ctx, ChownParams{Doc: doc, Owner: "dee"}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := r.MayReadAsset(info.Hash, "dee"); !ok {
		t.Fatal("the new owner of a document referencing the asset may not read it")
	}
	if ok, _ := r.MayReadAsset(theirs.Hash, "dee"); ok {
		t.Fatal("the new owner may read an asset the document never referenced")
	}
	if _, err := r.Chown(ctx, ChownParams{Doc: doc, Owner: "ana"}); err != nil {
		t.Fatal(err)
	}
	// In place (an existing block edited) too.
	p := para("b0", "x")
	p.Type, p.RichText, p.Attrs = flowdoc.Media, nil, bad.Attrs
	_, err = r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: "ana", BaseSeq: 2, Changes: []DraftChange{{Op: ChangeUpsert, Block: &p}}})
	if errs.CodeOf(err) != CodeUnknownAsset {
		t.Fatalf("in-place save of an unknown asset: %v", err)
	}
}

func TestGCKeepsReferencedAndRecentAssets(t *testing.T) {
	r := newRepo(t)
	clock := time.Now()
	r.now = func() time.Time { return clock }
	used, err := r.PutAsset(ctx, pngBytes(t, 2, 2, 7), "used.png", "ana")
	if err != nil {
		t.Fatal(err)
	}
	stray, err := r.PutAsset(ctx, pngBytes(t, 2, 2, 8), "stray.png", "ana")
	if err != nil {
		t.Fatal(err)
	}
	inDraft, err := r.PutAsset(ctx, pngBytes(t, 2, 2, 9), "draft.png", "ana")
	if err != nil {
		t.Fatal(err)
	}
	doc := create(t, r, 1)
	save(t, r, doc, 1, flowdoc.Block{ID: "m1", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Kind: "image", Src: used.URL}})
	if _, _, err := r.Checkpoint(ctx, doc, objstore.ReasonManual, "ana", ""); err != nil {
		t.Fatal(err)
	}
	// A draft-only reference, nested in a details block.
	det := flowdoc.Block{ID: "d1", Type: flowdoc.Details, RichText: []flowdoc.Run{{Text: "more"}},
		Children: []flowdoc.Block{{ID: "f1", Type: flowdoc.File, Attrs: &flowdoc.Attrs{Src: inDraft.URL, Name: "draft.png"}}}}
	save(t, r, doc, 2, det)

	// Within the grace period nothing goes.
	rep, err := r.GC(ctx, GCOptions{})
	if err != nil || rep.Removed != 0 {
		t.Fatalf("gc within grace: %+v %v", rep, err)
	}
	clock = clock.Add(DefaultPrune + time.Hour)
	rep, err = r.GC(ctx, GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []AssetInfo{used, inDraft} {
		if _, _, err := r.Asset(ctx, a.Hash); err != nil {
			t.Fatalf("gc removed referenced asset %s: %v", a.Name, err)
		}
	}
	if _, _, err := r.Asset(ctx, stray.Hash); !errors.Is(err, ErrNotFound) {
		t.Fatalf("gc kept the unreferenced asset past its grace: %v (report %+v)", err, rep)
	}
	if ok, _ := kv.Has(r.db, assetKey(stray.Hash)); ok {
		t.Fatal("gc left the removed asset's upload record")
	}
	if ok, _ := r.MayReadAsset(stray.Hash, "ana"); ok {
		t.Fatal("gc left the removed asset's access record")
	}
	if fr, err := r.Fsck(ctx, FsckOptions{}); err != nil || !fr.OK {
		t.Fatalf("fsck after gc: %+v %v", fr, err)
	}
}

func TestFsckFindsDamagedAsset(t *testing.T) {
	r := newRepo(t)
	info, err := r.PutAsset(ctx, pngBytes(t, 4, 4, 11), "a.png", "ana")
	if err != nil {
		t.Fatal(err)
	}
	doc := create(t, r, 1)
	save(t, r, doc, 1, flowdoc.Block{ID: "m1", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Kind: "image", Src: info.URL}})
	// Flip a byte of the stored asset.
	v, err := kv.Get(r.db, objstore.Key(info.Hash))
	if err != nil {
		t.Fatal(err)
	}
	v = bytes.Clone(v)
	v[len(v)-20] ^= 0xff
	b := r.db.NewBatch()
	b.Set(objstore.Key(info.Hash), v)
	if err := r.db.Apply(b, kv.Sync); err != nil {
		t.Fatal(err)
	}
	rep, err := r.Fsck(ctx, FsckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range rep.Problems {
		if p.Object == info.Hash.String() {
			found = true
		}
	}
	if rep.OK || !found {
		t.Fatalf("fsck of a damaged asset: %+v", rep)
	}
	// Removed entirely: the content naming it dangles.
	b = r.db.NewBatch()
	b.Delete(objstore.Key(info.Hash))
	if err := r.db.Apply(b, kv.Sync); err != nil {
		t.Fatal(err)
	}
	rep, _ = r.Fsck(ctx, FsckOptions{})
	if rep.OK {
		t.Fatalf("fsck of a missing asset: %+v", rep)
	}
}
