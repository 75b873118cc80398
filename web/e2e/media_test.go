package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// writePNG writes a w×h PNG of one colour and returns its path.
func writePNG(t testing.TB, dir, name string, w, h int, c color.RGBA) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// draftBlocks returns the draft's blocks as JSON values, from the API.
func (d *daemon) draftBlocks(doc string) []map[string]any {
	d.t.Helper()
	var v struct {
		Body struct {
			Blocks []map[string]any `json:"blocks"`
		} `json:"body"`
	}
	d.api("GET", "/v1/docs/"+doc+"/draft", nil, &v)
	return v.Body.Blocks
}

// assetBytes reads an asset with the admin's token.
func (d *daemon) assetBytes(hash string) []byte {
	d.t.Helper()
	req, _ := http.NewRequest("GET", d.url+"/v1/assets/"+hash, nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		d.t.Fatalf("GET /v1/assets/%s: %d %s", hash, res.StatusCode, b)
	}
	return b
}

var assetURL = regexp.MustCompile(`^folio-asset:([0-9a-f]{64})$`)

// mediaBlocks are the draft's media blocks (top level) in order.
func mediaBlocks(blocks []map[string]any) []map[string]any {
	var out []map[string]any
	for _, b := range blocks {
		if b["type"] == "media" {
			out = append(out, b)
		}
	}
	return out
}

func attr(b map[string]any, k string) string {
	a, _ := b["attrs"].(map[string]any)
	s, _ := a[k].(string)
	return s
}

// dropFiles drops files from disk on the element sel, as a person
// dragging them from a file manager (Input.dispatchDragEvent).
func dropFiles(sel string, files ...string) step {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.left + 20, r.top + r.height / 2]; })()`, sel)))
		if err != nil {
			return err
		}
		data := &input.DragData{Items: []*input.DragDataItem{}, Files: files, DragOperationsMask: 1}
		for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
			if _, err := cdp.Call(ctx, tg, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: box[0], Y: box[1], Data: data}); err != nil {
				return err
			}
		}
		return nil
	})
}

// pasteFile pastes the file at path (its bytes, name and type) at the
// caret, as a paste of a copied image delivers it.
func pasteFile(t testing.TB, path, mime string) step {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return eval(fmt.Sprintf(`(() => {
		const bytes = Uint8Array.from(atob(%q), (c) => c.charCodeAt(0));
		const dt = new DataTransfer();
		dt.items.add(new File([bytes], %q, { type: %q }));
		document.querySelector('.ProseMirror').dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
		return true; })()`, base64.StdEncoding.EncodeToString(b), filepath.Base(path), mime))
}

// An image chosen with the picker, pasted, and dropped is uploaded and
// shown; its alternative text is editable; the draft names each by its
// folio-asset URL, whose bytes are the file's.
func TestImagePickerPasteDrop(t *testing.T) {
	d := startDaemon(t)
	doc := d.newDoc("Pictures", [2]string{"p1", "Before the pictures."}, [2]string{"p2", "After."})
	ctx := openDoc(t, d, doc)
	dir := t.TempDir()
	red := writePNG(t, dir, "red.png", 40, 30, color.RGBA{200, 30, 30, 255})
	blue := writePNG(t, dir, "blue.png", 24, 24, color.RGBA{30, 60, 200, 255})
	green := writePNG(t, dir, "green.png", 32, 16, color.RGBA{30, 160, 60, 255})

	// The picker: the image goes after the block holding the caret.
	must(t, ctx, caretAtEnd("p1"), chromedp.SetUploadFiles(css(`#insert-file`), []string{red}))
	waitJS(t, ctx, `(() => { const i = document.querySelector('.ProseMirror [data-atom=media] img.media-image'); return !!i && i.src.startsWith('blob:') && i.complete && i.naturalWidth === 40; })()`)
	waitSynced(t, ctx)
	blocks := d.draftBlocks(doc)
	if len(blocks) != 3 || blocks[0]["id"] != "p1" || blocks[1]["type"] != "media" || blocks[2]["id"] != "p2" {
		t.Fatalf("after the upload the draft is %v, want p1, the image, p2", blocks)
	}
	m := assetURL.FindStringSubmatch(attr(blocks[1], "src"))
	if m == nil || attr(blocks[1], "kind") != "image" {
		t.Fatalf("the media block is %v, want kind image and src folio-asset:<hash>", blocks[1])
	}
	want, _ := os.ReadFile(red)
	if got := d.assetBytes(m[1]); !bytes.Equal(got, want) {
		t.Fatalf("the asset holds %d bytes, not the file's %d", len(got), len(want))
	}

	// Alternative text, typed in the card.
	must(t, ctx, chromedp.Click(css(`.ProseMirror [data-atom=media] .media-alt`)), insertText("A red rectangle"))
	waitJS(t, ctx, `document.querySelector('.ProseMirror [data-atom=media] img').alt === 'A red rectangle'`)
	waitSynced(t, ctx)
	if alt := attr(mediaBlocks(d.draftBlocks(doc))[0], "alt"); alt != "A red rectangle" {
		t.Fatalf("the saved alt text is %q", alt)
	}
	screenshot(t, ctx, "editor-image")

	// Paste: at the caret, at the end of p2.
	must(t, ctx, caretAtEnd("p2"), pasteFile(t, blue, "image/png"))
	waitJS(t, ctx, `document.querySelectorAll('.ProseMirror [data-atom=media] img.media-image[src^="blob:"]').length === 2`)
	waitSynced(t, ctx)
	blocks = d.draftBlocks(doc)
	if len(blocks) != 4 || blocks[2]["id"] != "p2" || blocks[3]["type"] != "media" {
		t.Fatalf("after the paste the draft is %v, want the pasted image after p2", blocks)
	}

	// Drop: a real file from disk dropped on p1.
	must(t, ctx, dropFiles(`.ProseMirror [data-block-id="p1"]`, green))
	waitJS(t, ctx, `document.querySelectorAll('.ProseMirror [data-atom=media] img.media-image[src^="blob:"]').length === 3`)
	waitSynced(t, ctx)
	blocks = d.draftBlocks(doc)
	if len(blocks) != 5 || blocks[0]["id"] != "p1" || blocks[1]["type"] != "media" {
		t.Fatalf("after the drop the draft is %v, want the dropped image right after p1", blocks)
	}
	gm := assetURL.FindStringSubmatch(attr(blocks[1], "src"))
	gwant, _ := os.ReadFile(green)
	if gm == nil || !bytes.Equal(d.assetBytes(gm[1]), gwant) {
		t.Fatalf("the dropped image's block is %v, not the green file", blocks[1])
	}

	// After a reload the images come back from the store.
	must(t, ctx, chromedp.Reload(), chromedp.WaitVisible(css(`#sync-status[data-sync-state="saved"]`)))
	waitJS(t, ctx, `[...document.querySelectorAll('.ProseMirror [data-atom=media] img.media-image')].filter((i) => i.src.startsWith('blob:') && i.complete && i.naturalWidth > 0).length === 3`)

	// An image no longer shown gives its blob URL back.
	url := get(t, ctx, chromedp.Evaluate[string](`document.querySelector('.ProseMirror [data-atom=media] img.media-image').src`))
	must(t, ctx, eval(`(() => { const ed = window.folioEditor.view.editor; let at = -1;
		ed.state.doc.forEach((n, off) => { if (at < 0 && n.type.name === 'mediaBlock') at = off; });
		ed.view.dispatch(ed.state.tr.delete(at, at + ed.state.doc.nodeAt(at).nodeSize)); return true; })()`))
	waitJS(t, ctx, fmt.Sprintf(`fetch(%q).then(() => false, () => true)`, url))
	waitSynced(t, ctx)
	if n := len(mediaBlocks(d.draftBlocks(doc))); n != 2 {
		t.Fatalf("after deleting one image the draft has %d, want 2", n)
	}
}

// A file too large and a file of a refused type are reported in words and
// insert nothing.
func TestImageUploadErrors(t *testing.T) {
	d := startDaemon(t)
	doc := d.newDoc("Refusals", [2]string{"p1", "Only text here."})
	ctx := openDoc(t, d, doc)
	dir := t.TempDir()
	big := filepath.Join(dir, "huge.png")
	if err := os.WriteFile(big, make([]byte, 10<<20+1), 0o644); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(dir, "logo.svg")
	os.WriteFile(svg, []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), 0o644)
	exe := filepath.Join(dir, "tool.bin")
	os.WriteFile(exe, []byte("\x7fELF\x02\x01\x01\x00 not an image at all"), 0o644)
	before := d.draftBlocks(doc)
	for _, c := range []struct {
		file string
		want []string
	}{
		{big, []string{"huge.png was not added", "too large"}},
		{svg, []string{"logo.svg was not added", "refused"}},
		{exe, []string{"tool.bin was not added", "refused"}},
	} {
		must(t, ctx, caretAtEnd("p1"), eval(`(document.querySelector('#media-status').textContent = '', true)`), chromedp.SetUploadFiles(css(`#insert-file`), []string{c.file}))
		waitJS(t, ctx, `document.querySelector('#media-status').classList.contains('error')`)
		msg := get(t, ctx, chromedp.Text(css(`#media-status`)))
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Fatalf("uploading %s shows %q, want it to say %q", filepath.Base(c.file), msg, w)
			}
		}
		if role := get(t, ctx, chromedp.Evaluate[string](`document.querySelector('#media-status').getAttribute('role')`)); role != "alert" {
			t.Fatalf("the refusal is announced as %q, want alert", role)
		}
		if n := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('.ProseMirror [data-atom]').length`)); n != 0 {
			t.Fatalf("a refused %s left %d blocks in the editor", filepath.Base(c.file), n)
		}
	}
	screenshot(t, ctx, "editor-upload-refused")
	waitSynced(t, ctx)
	after := d.draftBlocks(doc)
	a, _ := json.Marshal(after)
	b, _ := json.Marshal(before)
	if !bytes.Equal(a, b) {
		t.Fatalf("refused uploads changed the draft: %s, was %s", a, b)
	}
}
