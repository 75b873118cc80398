package flowdoc

import (
	"strings"
	"testing"
)

const testHash = "5d41402abc4b2a76b9719d911017c592ae2e0b1f4e0b1bd7d6f1b5b6c9e0a7f3"

func assetDoc() Document {
	return Document{SchemaVersion: 1, Blocks: []Block{
		{ID: "h", Type: Heading, Attrs: &Attrs{Level: 1}, RichText: []Run{{Text: "My  title"}}},
		{ID: "m", Type: Media, Attrs: &Attrs{Kind: "image", Src: AssetURL(testHash), Alt: "chart"}},
		{ID: "d", Type: Details, RichText: []Run{{Text: "more"}}, Children: []Block{
			{ID: "f", Type: File, Attrs: &Attrs{Src: AssetURL(testHash), Name: "data.zip"}},
			{ID: "x", Type: Media, Attrs: &Attrs{Kind: "image", Src: "https://example.com/a.png"}}}},
	}}
}

func TestAssetURLs(t *testing.T) {
	for s, ok := range map[string]bool{
		AssetURL(testHash):                         true,
		"folio-asset:" + strings.ToUpper(testHash): false,
		"folio-asset:" + testHash[:63]:             false,
		"FOLIO-ASSET:" + testHash:                  false,
		"folio-asset:" + testHash + "0":            false,
	} {
		if _, got := ParseAssetURL(s); got != ok {
			t.Errorf("ParseAssetURL(%q) = %v", s, got)
		}
	}
	d := assetDoc()
	if probs := Validate(d, DefaultLimits); len(probs) != 0 {
		t.Fatalf("asset URLs in media and file src: %v", probs)
	}
	if refs := DocAssetRefs(d); len(refs) != 1 || refs[0] != testHash {
		t.Fatalf("DocAssetRefs = %v", refs)
	}
	bad := Document{SchemaVersion: 1, Blocks: []Block{{ID: "e", Type: Embed, Attrs: &Attrs{URL: AssetURL(testHash)}}}}
	if probs := Validate(bad, DefaultLimits); len(probs) != 1 || !strings.Contains(probs[0].Rule, "only as the src of media and file") {
		t.Fatalf("embed naming an asset: %v", probs)
	}
}

func TestMapAssetsAndHTML(t *testing.T) {
	d := assetDoc()
	m := MapAssets(d, func(h string) string { return "assets/" + h + ".png" })
	if m.Blocks[1].Attrs.Src != "assets/"+testHash+".png" || m.Blocks[2].Children[0].Attrs.Src != "assets/"+testHash+".png" {
		t.Fatalf("MapAssets: %+v", m.Blocks)
	}
	if d.Blocks[1].Attrs.Src != AssetURL(testHash) || d.Blocks[2].Children[0].Attrs.Src != AssetURL(testHash) {
		t.Fatal("MapAssets changed its input")
	}
	if m.Blocks[2].Children[1].Attrs.Src != "https://example.com/a.png" {
		t.Fatal("MapAssets changed a URL that names no asset")
	}
	// Without an asset URL function, an asset is not a source: alt text.
	plain := RenderHTML(d)
	if strings.Contains(plain, "folio-asset") || !strings.Contains(plain, "chart") {
		t.Fatalf("RenderHTML without assets: %s", plain)
	}
	served := RenderHTMLWith(d, HTMLOptions{AssetURL: func(h string) string { return "/assets/" + h }})
	if !strings.Contains(served, `<img loading="lazy" src="/assets/`+testHash+`" alt="chart">`) ||
		!strings.Contains(served, `<a href="/assets/`+testHash+`" download>data.zip</a>`) {
		t.Fatalf("RenderHTMLWith: %s", served)
	}
}

func TestWithoutTitle(t *testing.T) {
	d := assetDoc()
	if got := WithoutTitle(d, "My title"); len(got.Blocks) != len(d.Blocks)-1 || got.Blocks[0].ID != "m" {
		t.Fatalf("a first level-1 heading equal to the title (white space aside) stays: %+v", got.Blocks)
	}
	for _, title := range []string{"Another title", "my title", ""} {
		if got := WithoutTitle(d, title); len(got.Blocks) != len(d.Blocks) {
			t.Errorf("WithoutTitle(%q) dropped a heading that is not the title", title)
		}
	}
	d.Blocks[0].Attrs.Level = 2
	if got := WithoutTitle(d, "My title"); len(got.Blocks) != len(d.Blocks) {
		t.Error("a level-2 heading was taken for the title")
	}
}

func TestImportMarkdownImageOption(t *testing.T) {
	src := []byte("![a](images/a.png)\n\n![b](https://example.com/b.png)\n\n![c](missing.png)\n")
	var asked []string
	d, unsupported, err := ImportMarkdownWith(src, ImportOptions{Image: func(s string) string {
		asked = append(asked, s)
		if s == "images/a.png" {
			return AssetURL(testHash)
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 2 || asked[0] != "images/a.png" || asked[1] != "missing.png" {
		t.Fatalf("Image was asked about %v; want the two relative paths only", asked)
	}
	if d.Blocks[0].Type != Media || d.Blocks[0].Attrs.Src != AssetURL(testHash) || d.Blocks[1].Attrs.Src != "https://example.com/b.png" {
		t.Fatalf("blocks %+v", d.Blocks)
	}
	if d.Blocks[2].Type != Media || d.Blocks[2].Attrs.Src != "missing.png" || len(unsupported) != 0 {
		t.Fatalf("a declined image is kept as the relative reference it is: %+v %v", d.Blocks[2], unsupported)
	}
	// An exported document's asset URLs come back as they are.
	back, _, _ := ImportMarkdown([]byte(RenderMarkdown(Document{SchemaVersion: 1, Blocks: []Block{d.Blocks[0]}})))
	if back.Blocks[0].Type != Media || back.Blocks[0].Attrs.Src != AssetURL(testHash) {
		t.Fatalf("Markdown round trip of an asset image: %+v", back.Blocks)
	}
}
