package repo

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/objstore/pack"
)

// docWithAsset makes a sealed document of ana's whose body holds an image.
func docWithAsset(t *testing.T, r *Repo, seed uint8) (string, AssetInfo) {
	t.Helper()
	info, err := r.PutAsset(ctx, pngBytes(t, 8, 8, seed), "pic.png", "ana")
	if err != nil {
		t.Fatal(err)
	}
	v, err := r.CreateDoc(ctx, CreateParams{Owner: "ana", Attrs: flowdoc.Attributes{Title: "Pictures", Slug: "pictures"}, Body: flowdoc.Document{SchemaVersion: 1,
		Blocks: []flowdoc.Block{para("p1", "See:"), {ID: "m1", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Kind: "image", Src: info.URL, Alt: "pic"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return v.Doc, info
}

func indexer(r *Repo, owner string) pack.Indexer {
	return func(ctx context.Context, b *kv.Batch, doc string, head objstore.ID) error {
		return r.IndexInto(ctx, b, doc, head, owner)
	}
}

// A pack carries a document's assets (before the contents that name
// them), an import checks them and gives the new owner access, and haves
// that list the receiver's assets keep them out of the next pack.
func TestPackCarriesAssets(t *testing.T) {
	src := newRepo(t)
	doc, info := docWithAsset(t, src, 21)
	var buf bytes.Buffer
	st, err := pack.Export(ctx, src.PackStores(), &buf, pack.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dst := newRepo(t)
	if _, err := pack.Import(ctx, dst.PackStores(), bytes.NewReader(buf.Bytes()), pack.ImportOptions{Index: indexer(dst, "zed")}); err != nil {
		t.Fatal(err)
	}
	a, _, err := dst.Asset(ctx, info.Hash)
	if err != nil || a.MIME != "image/png" {
		t.Fatalf("imported asset: %v", err)
	}
	if ok, _ := dst.MayReadAsset(info.Hash, "zed"); !ok {
		t.Fatal("the imported document's owner may not read its asset")
	}
	if rep, err := dst.Fsck(ctx, FsckOptions{}); err != nil || !rep.OK {
		t.Fatalf("fsck after import: %+v %v", rep, err)
	}
	// A new version whose block names the same asset under a new caption:
	// with the receiver's assets among the haves, the asset is not sent.
	save(t, src, doc, 1, flowdoc.Block{ID: "m1", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Kind: "image", Src: info.URL, Alt: "pic", Caption: "now captioned"}})
	if _, _, err := src.Checkpoint(ctx, doc, objstore.ReasonManual, "ana", ""); err != nil {
		t.Fatal(err)
	}
	head, err := dst.Refs().Get(HeadRef(doc))
	if err != nil {
		t.Fatal(err)
	}
	var without, with bytes.Buffer
	s1, err := pack.Export(ctx, src.PackStores(), &without, pack.ExportOptions{Haves: []objstore.ID{head}})
	if err != nil {
		t.Fatal(err)
	}
	assets, err := dst.ListAssets(ctx)
	if err != nil || len(assets) != 1 || assets[0] != info.Hash {
		t.Fatalf("ListAssets = %v %v", assets, err)
	}
	s2, err := pack.Export(ctx, src.PackStores(), &with, pack.ExportOptions{Haves: append([]objstore.ID{head}, assets...)})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Objects != s1.Objects-1 || with.Len() >= without.Len()-100 {
		t.Fatalf("haves with the asset: %d objects %d bytes; without: %d objects %d bytes (full pack %d)", s2.Objects, with.Len(), s1.Objects, without.Len(), st.Objects)
	}
	if _, err := pack.Import(ctx, dst.PackStores(), bytes.NewReader(with.Bytes()), pack.ImportOptions{Index: indexer(dst, "zed")}); err != nil {
		t.Fatalf("incremental import: %v", err)
	}
}

// A crafted pack entry: an asset that records image/png over HTML bytes.
func TestPackRefusesMistypedAsset(t *testing.T) {
	lie := &objstore.Asset{MIME: "image/png", Width: 1, Height: 1, Data: []byte("<html><script>alert(1)</script>")}
	data, id, err := lie.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := objstore.CheckAsset(data); err == nil {
		t.Fatal("CheckAsset accepted HTML recorded as a PNG")
	}
	var buf bytes.Buffer
	pw, err := pack.NewWriter(&buf, pack.Header{Count: pack.Streamed})
	if err != nil {
		t.Fatal(err)
	}
	if err := pw.Add(id, objstore.KindAsset, data); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	dst := newRepo(t)
	if _, err := pack.Import(ctx, dst.PackStores(), bytes.NewReader(buf.Bytes()), pack.ImportOptions{}); err == nil || !strings.Contains(err.Error(), "asset") {
		t.Fatalf("import of a mistyped asset: %v", err)
	}
	if ok, _ := dst.Objects().Has(id); ok {
		t.Fatal("the mistyped asset was stored")
	}
}

// export git writes each asset once, beside the documents, and the
// Markdown names it by its relative path.
func TestGitExportWritesAssets(t *testing.T) {
	r := newRepo(t)
	_, info := docWithAsset(t, r, 22)
	var buf bytes.Buffer
	if _, err := pack.ExportGit(ctx, r.PackStores(), &buf, pack.GitOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	path := "docs/assets/" + info.Hash.String() + ".png"
	if strings.Count(out, "M 100644 inline "+path+"\n") != 1 {
		t.Fatalf("stream does not add %s once:\n%.2000s", path, out)
	}
	if !strings.Contains(out, "![pic](assets/"+info.Hash.String()+".png)") {
		t.Fatalf("the Markdown does not name the asset by its relative path:\n%.3000s", out)
	}
	a, _, _ := r.Asset(ctx, info.Hash)
	if !bytes.Contains(buf.Bytes(), a.Data) {
		t.Fatal("the stream does not hold the asset's bytes")
	}
	if !strings.Contains(out, `"src": "folio-asset:`+info.Hash.String()) && !strings.Contains(out, `"src":"folio-asset:`+info.Hash.String()) {
		t.Fatal("the JSON file does not keep the asset URL")
	}
}
