package mediatype_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/mediatype"
)

func encoded(t *testing.T, enc func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := enc(&b, image.NewRGBA(image.Rect(0, 0, 5, 3))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withChunk inserts a PNG chunk right after IHDR.
func withChunk(p []byte, typ string, data []byte) []byte {
	var c bytes.Buffer
	binary.Write(&c, binary.BigEndian, uint32(len(data)))
	c.WriteString(typ)
	c.Write(data)
	binary.Write(&c, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	at := 8 + 25 // signature, IHDR
	return append(append(append([]byte{}, p[:at]...), c.Bytes()...), p[at:]...)
}

func webpLossless(w, h int) []byte {
	var f bytes.Buffer
	f.WriteString("VP8L")
	binary.Write(&f, binary.LittleEndian, uint32(5))
	f.WriteByte(0x2f)
	binary.Write(&f, binary.LittleEndian, uint32(w-1)|uint32(h-1)<<14)
	f.WriteByte(0) // pad to even
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(4+f.Len()))
	b.WriteString("WEBP")
	b.Write(f.Bytes())
	for b.Len() < 40 {
		b.WriteByte(0)
	}
	return b.Bytes()
}

func avifFile(brand string, w, h uint32) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(20))
	b.WriteString("ftyp" + brand + "\x00\x00\x00\x00mif1")
	binary.Write(&b, binary.BigEndian, uint32(20))
	b.WriteString("ispe\x00\x00\x00\x00")
	binary.Write(&b, binary.BigEndian, w)
	binary.Write(&b, binary.BigEndian, h)
	return b.Bytes()
}

func TestSniff(t *testing.T) {
	pngData := encoded(t, func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) })
	jpegData := encoded(t, func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, nil) })
	gifData := encoded(t, func(b *bytes.Buffer, m image.Image) error { return gif.Encode(b, m, nil) })
	htmlInPNG := withChunk(pngData, "tEXt", []byte("Comment\x00<html><script>alert(1)</script></html>"))
	cases := []struct {
		name string
		data []byte
		mime string // "" : refused
		w, h int
	}{
		{"png", pngData, mediatype.PNG, 5, 3},
		{"jpeg", jpegData, mediatype.JPEG, 5, 3},
		{"gif", gifData, mediatype.GIF, 5, 3},
		{"webp", webpLossless(640, 480), mediatype.WebP, 640, 480},
		{"avif", avifFile("avif", 800, 600), mediatype.AVIF, 800, 600},
		{"heic is not avif", avifFile("heic", 800, 600), "", 0, 0},
		{"pdf", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"), mediatype.PDF, 0, 0},
		{"zip", []byte("PK\x03\x04\x14\x00\x00\x00"), mediatype.ZIP, 0, 0},
		{"text", []byte("notes 笔记\nline two\n"), mediatype.Text, 0, 0},
		// A PNG carrying HTML in a text chunk is a PNG: it is served as
		// image/png with nosniff, never as HTML.
		{"png with an html payload", htmlInPNG, mediatype.PNG, 5, 3},
		{"truncated png", pngData[:len(pngData)-12], "", 0, 0},
		{"png header only", pngData[:40], "", 0, 0},
		{"truncated jpeg", jpegData[:len(jpegData)/2], "", 0, 0},
		{"png signature, html body", append([]byte("\x89PNG\r\n\x1a\n"), "<html><script>x</script>"...), "", 0, 0},
		{"huge canvas", webpLossless(16384, 16384), "", 0, 0},
		{"html", []byte("<!doctype html><html><script>alert(1)</script>"), "", 0, 0},
		{"html without doctype", []byte("\n  <div onclick=x>hi</div>"), "", 0, 0},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), "", 0, 0},
		{"svg with xml declaration", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`), "", 0, 0},
		{"svg after a BOM", []byte("\xef\xbb\xbf<svg/>"), "", 0, 0},
		{"latin-1 text", []byte("caf\xe9"), "", 0, 0},
		{"empty", nil, "", 0, 0},
		{"executable", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"), "", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := mediatype.Sniff(c.data)
			if c.mime == "" {
				if err == nil {
					t.Fatalf("accepted as %+v, want refused", got)
				}
				if errs.KindOf(err) != errs.Unsupported || errs.CodeOf(err) != mediatype.CodeUnsupported {
					t.Fatalf("refusal %v has kind %v code %s", err, errs.KindOf(err), errs.CodeOf(err))
				}
				if !strings.Contains(err.Error(), "allowed are") {
					t.Fatalf("refusal %q does not say what is allowed", err)
				}
				return
			}
			if err != nil || got.MIME != c.mime || got.Width != c.w || got.Height != c.h {
				t.Fatalf("Sniff = %+v, %v; want %s %dx%d", got, err, c.mime, c.w, c.h)
			}
		})
	}
}

// TestPolyglotIsNeverMarkup: a GIF/script polyglot is at most a GIF.
func TestPolyglotIsNeverMarkup(t *testing.T) {
	poly := []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00/*<html><script>alert(1)</script>*/;")
	got, err := mediatype.Sniff(poly)
	if err == nil && got.MIME != mediatype.GIF {
		t.Fatalf("polyglot accepted as %s", got.MIME)
	}
}

func TestDisposition(t *testing.T) {
	if d := mediatype.Disposition(mediatype.PNG, ""); d != "inline" {
		t.Fatal(d)
	}
	d := mediatype.Disposition(mediatype.PDF, `报告 "final".pdf`)
	if !strings.HasPrefix(d, `attachment; filename="`) || !strings.Contains(d, "filename*=UTF-8''%E6%8A%A5") || strings.Count(d, `"`) != 2 {
		t.Fatal(d)
	}
}
