package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/objstore"
)

func testPNG(t *testing.T, seed uint8) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 3, 2))
	for i := range img.Pix {
		img.Pix[i] = seed * uint8(i+1)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func assetURLOf(t *testing.T, data []byte) string {
	t.Helper()
	a, err := objstore.NewAsset(data)
	if err != nil {
		t.Fatal(err)
	}
	_, id, err := a.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return flowdoc.AssetURL(id.String())
}

// A Markdown file's relative images come into the asset store; images
// that are missing, outside the file's directory or absolute are kept as
// their alt text with a note.
func TestDocNewImportsRelativeImages(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	if _, _, code := run(t, "--data", data, "init"); code != 0 {
		t.Fatal("init")
	}
	post := filepath.Join(tmp, "post")
	os.MkdirAll(filepath.Join(post, "images"), 0o755)
	img := testPNG(t, 3)
	os.WriteFile(filepath.Join(post, "images", "a b.png"), img, 0o644)
	os.WriteFile(filepath.Join(tmp, "secret.png"), testPNG(t, 5), 0o644)
	os.Symlink(filepath.Join(tmp, "secret.png"), filepath.Join(post, "images", "link.png"))
	md := write(t, post, "post.md", "# Post\n\n![A chart](images/a%20b.png \"Figure 1\")\n\n![gone](images/missing.png)\n\n"+
		"![escape](../secret.png)\n\n![abs]("+filepath.Join(tmp, "secret.png")+")\n\n![link](images/link.png)\n\n![again](./images/a%20b.png)\n")
	out, stderr, code := run(t, "--data", data, "doc", "new", "--title", "Post", "--from", md)
	if code != 0 {
		t.Fatalf("doc new: %d %s", code, stderr)
	}
	id := strings.Fields(out)[len(strings.Fields(out))-1]
	for _, want := range []string{"note: " + md + ": image images/missing.png not found", "note: " + md + ": image ../secret.png is outside the file's directory",
		"image " + filepath.Join(tmp, "secret.png") + " is an absolute path", "image images/link.png leads outside the file's directory"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	show, stderr2, code := run(t, "--data", data, "show", firstID(t, data), "--format", "json")
	if code != 0 {
		t.Fatalf("show: %s", stderr2)
	}
	d, err := flowdoc.Parse([]byte(show))
	if err != nil {
		t.Fatal(err)
	}
	url := assetURLOf(t, img)
	// The two images inside the directory are assets; every other one is
	// kept as the relative reference it was, none of them stored.
	var media []flowdoc.Block
	for _, b := range d.Blocks {
		if b.Type == flowdoc.Media && strings.HasPrefix(b.Attrs.Src, flowdoc.AssetScheme) {
			media = append(media, b)
		} else if b.Type == flowdoc.Media && !flowdoc.IsRelativeURL(b.Attrs.Src) {
			t.Errorf("declined image %q is not kept as a relative reference", b.Attrs.Src)
		}
	}
	if len(media) != 2 || media[0].Attrs.Src != url || media[0].Attrs.Alt != "A chart" || media[0].Attrs.Caption != "Figure 1" || media[1].Attrs.Src != url {
		t.Fatalf("media blocks %+v, want two of %s (doc %s)\n%s", media, url, id, show)
	}
	got, _, code := run(t, "--data", data, "asset", "get", url)
	if code != 0 || got != string(img) {
		t.Fatalf("asset get: %d, %d bytes", code, len(got))
	}
}

// firstID is the id of the only document in data.
func firstID(t *testing.T, data string) string {
	t.Helper()
	out, _, _ := run(t, "--data", data, "doc", "list", "--format", "json")
	i := strings.Index(out, `"id": "`)
	if i < 0 {
		t.Fatalf("doc list: %s", out)
	}
	rest := out[i+7:]
	return rest[:strings.Index(rest, `"`)]
}

// asset add and get print the same directly and through the daemon.
func TestAssetVerbsRemoteMatchDirect(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	direct, served := filepath.Join(tmp, "direct"), filepath.Join(tmp, "served")
	for _, d := range []string{direct, served} {
		if _, _, code := run(t, "--data", d, "init"); code != 0 {
			t.Fatal("init")
		}
	}
	dm := startDaemon(t, served, "")
	img := testPNG(t, 7)
	file := filepath.Join(tmp, "pic.png")
	os.WriteFile(file, img, 0o644)
	svg := write(t, tmp, "x.svg", `<svg xmlns="http://www.w3.org/2000/svg"/>`)
	modes := [][]string{{"--data", direct}, {"--server", dm.url, "--token", dm.token}}
	var outs []string
	for _, m := range modes {
		out, stderr, code := run(t, append(m, "asset", "add", file)...)
		if code != 0 || strings.TrimSpace(out) != assetURLOf(t, img) {
			t.Fatalf("%v asset add: %d %q %s", m, code, out, stderr)
		}
		got, stderr, code := run(t, append(m, "asset", "get", strings.TrimSpace(out))...)
		if code != 0 || got != string(img) {
			t.Fatalf("%v asset get: %d %s", m, code, stderr)
		}
		_, refusal, code := run(t, append(m, "asset", "add", svg)...)
		if code != exitInvalid || !strings.Contains(refusal, "markup") {
			t.Fatalf("%v svg: %d %s", m, code, refusal)
		}
		js, _, _ := run(t, append(m, "asset", "add", file, "--format", "json")...)
		outs = append(outs, out, js, strings.ReplaceAll(refusal, svg, "SVG"))
		var missing objstore.ID
		_, nf, code := run(t, append(m, "asset", "get", missing.String())...)
		if code != exitNotFound {
			t.Fatalf("%v missing asset: %d %s", m, code, nf)
		}
	}
	for i := 0; i < 3; i++ {
		if outs[i] != outs[i+3] {
			t.Errorf("direct and remote differ:\n%s\n%s", outs[i], outs[i+3])
		}
	}
}

// backup pull and restore carry a document's images; a second pull after
// a caption edit does not send the image again.
func TestBackupCarriesAssets(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	served, mirror, target := filepath.Join(tmp, "served"), filepath.Join(tmp, "mirror"), filepath.Join(tmp, "target")
	run(t, "--data", served, "init")
	dm := startDaemon(t, served, "")
	remote := []string{"--server", dm.url, "--token", dm.token}
	post := filepath.Join(tmp, "post")
	os.MkdirAll(post, 0o755)
	img := testPNG(t, 9)
	os.WriteFile(filepath.Join(post, "a.png"), img, 0o644)
	md := write(t, post, "p.md", "Text.\n\n![pic](a.png)\n")
	out, stderr, code := run(t, append(remote, "doc", "new", "--title", "P", "--from", md)...)
	if code != 0 {
		t.Fatalf("doc new: %s", stderr)
	}
	id := strings.TrimSpace(out)
	if out, stderr, code := run(t, append(remote, "backup", "pull", "--to", mirror)...); code != 0 {
		t.Fatalf("pull: %s %s", out, stderr)
	}
	url := assetURLOf(t, img)
	if got, stderr, code := run(t, "--data", mirror, "asset", "get", url); code != 0 || got != string(img) {
		t.Fatalf("mirror lacks the asset: %d %s", code, stderr)
	}
	// A caption edit: a new content object naming the same asset.
	md2 := write(t, post, "p.md", "Text.\n\n![pic](a.png \"now with a caption\")\n")
	if _, stderr, code := run(t, append(remote, "doc", "save", id, "--from", md2, "--checkpoint")...); code != 0 {
		t.Fatal(stderr)
	}
	out, stderr, code = run(t, append(remote, "backup", "pull", "--to", mirror, "--format", "json")...)
	if code != 0 {
		t.Fatalf("second pull: %s", stderr)
	}
	var pulled struct{ Objects int }
	if err := json.Unmarshal([]byte(out), &pulled); err != nil || pulled.Objects != 3 {
		t.Fatalf("second pull sent %s, want 3 objects (content, version, txn; not the asset)", out)
	}
	if _, stderr, code := run(t, "--data", target, "backup", "restore", "--from", mirror); code != 0 {
		t.Fatal(stderr)
	}
	if got, _, code := run(t, "--data", target, "asset", "get", url); code != 0 || got != string(img) {
		t.Fatal("restore lacks the asset")
	}
	if out, _, code := run(t, "--data", target, "fsck"); code != 0 {
		t.Fatalf("fsck after restore: %s", out)
	}
}
