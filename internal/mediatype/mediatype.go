package mediatype

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	_ "image/gif" // DecodeConfig of the allowed image formats
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio/internal/errs"
)

// The allowed types.
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
	GIF  = "image/gif"
	WebP = "image/webp"
	AVIF = "image/avif"
	PDF  = "application/pdf"
	Text = "text/plain; charset=utf-8"
	ZIP  = "application/zip"
)

// MaxDimension bounds an image's width and height, MaxPixels their
// product: a small file that claims a huge canvas is refused before any
// browser or tool tries to decode it.
const (
	MaxDimension = 16384
	MaxPixels    = 100_000_000
)

// CodeUnsupported is the error code of a refused type (kind Unsupported:
// HTTP 415).
const CodeUnsupported = "unsupported_type"

// Type is what an asset's bytes are.
type Type struct {
	MIME   string
	Width  int // pixels, images only
	Height int
}

// Image reports whether t is an image (served inline; the rest is served
// as an attachment).
func (t Type) Image() bool { return strings.HasPrefix(t.MIME, "image/") }

// Ext is the usual file name extension of t, with its dot.
func (t Type) Ext() string { return Ext(t.MIME) }

// Ext is the usual file name extension of an allowed type, with its dot
// ("" for an unknown one).
func Ext(mime string) string {
	switch mime {
	case PNG:
		return ".png"
	case JPEG:
		return ".jpg"
	case GIF:
		return ".gif"
	case WebP:
		return ".webp"
	case AVIF:
		return ".avif"
	case PDF:
		return ".pdf"
	case Text:
		return ".txt"
	case ZIP:
		return ".zip"
	}
	return ""
}

// Allowed reports whether mime is one of the allowed types.
func Allowed(mime string) bool { return Ext(mime) != "" }

func refuse(format string, args ...any) error {
	return errs.C(errs.Unsupported, CodeUnsupported, format+"; allowed are PNG, JPEG, GIF, WebP and AVIF images, PDF, plain UTF-8 text and ZIP", args...)
}

// Sniff returns the type of data, or an error of kind errs.Unsupported
// (code unsupported_type) naming why it is refused.
func Sniff(data []byte) (Type, error) {
	if len(data) == 0 {
		return Type{}, refuse("the file is empty")
	}
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return decoded(data, PNG, "png", pngComplete)
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		return decoded(data, JPEG, "jpeg", jpegComplete)
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return decoded(data, GIF, "gif", gifComplete)
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return webp(data)
	case len(data) >= 12 && string(data[4:8]) == "ftyp":
		return avif(data)
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return Type{MIME: PDF}, nil
	case bytes.HasPrefix(data, []byte("PK\x03\x04")), bytes.HasPrefix(data, []byte("PK\x05\x06")):
		return Type{MIME: ZIP}, nil
	}
	sniffed := http.DetectContentType(data)
	if !strings.HasPrefix(sniffed, "text/plain") {
		return Type{}, refuse("the file is %s", strings.TrimSuffix(sniffed, "; charset=utf-8"))
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return Type{}, refuse("the file is text but not UTF-8 (or holds NUL bytes)")
	}
	head := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n\f")
	if len(head) > 0 && head[0] == '<' {
		// DetectContentType calls an SVG without an XML declaration, and
		// much HTML it does not recognize, plain text.
		return Type{}, refuse("the file is markup (HTML, SVG or XML)")
	}
	return Type{MIME: Text}, nil
}

// decoded checks an image with its decoder's DecodeConfig and its end.
func decoded(data []byte, mime, format string, complete func([]byte) bool) (Type, error) {
	cfg, got, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || got != format {
		return Type{}, refuse("the file starts like %s but its header does not decode (%v)", strings.ToUpper(format), err)
	}
	if !complete(data) {
		return Type{}, refuse("the %s image is truncated (it has no end marker)", strings.ToUpper(format))
	}
	return sized(mime, cfg.Width, cfg.Height)
}

func sized(mime string, w, h int) (Type, error) {
	if w <= 0 || h <= 0 || w > MaxDimension || h > MaxDimension || w*h > MaxPixels {
		return Type{}, refuse("the image claims %d×%d pixels; at most %d on a side and %d in all", w, h, MaxDimension, MaxPixels)
	}
	return Type{MIME: mime, Width: w, Height: h}, nil
}

// pngComplete reports whether the chunks run to an IEND chunk.
func pngComplete(d []byte) bool {
	off := 8
	for off+12 <= len(d) {
		n := int(binary.BigEndian.Uint32(d[off:]))
		if n < 0 || n > len(d)-off-12 {
			return false
		}
		if string(d[off+4:off+8]) == "IEND" {
			return true
		}
		off += 12 + n
	}
	return false
}

// jpegComplete reports whether the image ends with EOI (trailing zero
// padding allowed).
func jpegComplete(d []byte) bool {
	d = bytes.TrimRight(d, "\x00")
	return bytes.HasSuffix(d, []byte{0xff, 0xd9})
}

// gifComplete reports whether the stream ends with the trailer byte.
func gifComplete(d []byte) bool {
	d = bytes.TrimRight(d, "\x00")
	return len(d) > 0 && d[len(d)-1] == 0x3b
}

// webp reads the dimensions of a RIFF WebP (VP8, VP8L or VP8X) and
// checks that the RIFF size matches the file.
func webp(d []byte) (Type, error) {
	bad := func(why string) (Type, error) { return Type{}, refuse("the file starts like WebP but %s", why) }
	if riff := int64(binary.LittleEndian.Uint32(d[4:8])) + 8; riff > int64(len(d)) {
		return bad("is truncated")
	}
	if len(d) < 30 {
		return bad("is too short for its header")
	}
	c := d[12:]
	switch string(c[:4]) {
	case "VP8 ":
		f := c[8:]
		if f[3] != 0x9d || f[4] != 0x01 || f[5] != 0x2a {
			return bad("its VP8 frame has no start code")
		}
		return sized(WebP, int(binary.LittleEndian.Uint16(f[6:])&0x3fff), int(binary.LittleEndian.Uint16(f[8:])&0x3fff))
	case "VP8L":
		f := c[8:]
		if f[0] != 0x2f {
			return bad("its lossless stream has no signature")
		}
		b := binary.LittleEndian.Uint32(f[1:5])
		return sized(WebP, int(b&0x3fff)+1, int(b>>14&0x3fff)+1)
	case "VP8X":
		f := c[8:]
		w := int(f[4]) | int(f[5])<<8 | int(f[6])<<16
		h := int(f[7]) | int(f[8])<<8 | int(f[9])<<16
		return sized(WebP, w+1, h+1)
	}
	return bad("its first chunk is not VP8, VP8L or VP8X")
}

// avif checks an ISOBMFF file whose major or compatible brand is avif
// or avis and reads the image size from its first ispe property.
func avif(d []byte) (Type, error) {
	n := int(binary.BigEndian.Uint32(d[:4]))
	if n < 16 || n > len(d) || n%4 != 0 {
		return Type{}, refuse("the file is an ISO media file with a malformed ftyp box")
	}
	brand := false
	for off := 8; off+4 <= n; off += 4 {
		if off == 12 {
			continue // minor version
		}
		if b := string(d[off : off+4]); b == "avif" || b == "avis" {
			brand = true
		}
	}
	if !brand {
		return Type{}, refuse("the file is an ISO media file (video or HEIF?) that is not AVIF")
	}
	i := bytes.Index(d, []byte("ispe"))
	if i < 4 || i+16 > len(d) {
		return Type{}, refuse("the AVIF file has no image size (ispe) property")
	}
	w := binary.BigEndian.Uint32(d[i+8:])
	h := binary.BigEndian.Uint32(d[i+12:])
	if w > MaxDimension || h > MaxDimension {
		return sized(AVIF, MaxDimension+1, 1)
	}
	return sized(AVIF, int(w), int(h))
}

// Disposition is the Content-Disposition of an asset of type mime named
// name ("" : none): inline for images, attachment for everything else,
// with the name in RFC 6266 / 5987 form.
func Disposition(mime, name string) string {
	d := "attachment"
	if strings.HasPrefix(mime, "image/") {
		d = "inline"
	}
	if name == "" {
		return d
	}
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r >= 0x7f || r == '"' || r == '\\' || r == '/' || r == ';' {
			return '_'
		}
		return r
	}, name)
	return fmt.Sprintf(`%s; filename="%s"; filename*=UTF-8''%s`, d, ascii, pathEscape(name))
}

func pathEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
