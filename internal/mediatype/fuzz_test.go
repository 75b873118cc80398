package mediatype_test

import (
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/mediatype"
)

// FuzzSniff: any bytes give an allowed type or a refusal, never a panic,
// never markup, and the same answer twice.
func FuzzSniff(f *testing.F) {
	for _, s := range []string{"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "GIF89a\x01\x00\x01\x00", "RIFF\x10\x00\x00\x00WEBPVP8L", "\x00\x00\x00\x18ftypavif",
		"%PDF-1.4", "PK\x03\x04", "hello", "<svg/>", "\xff\xd8\xff\xe0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := mediatype.Sniff(data)
		again, err2 := mediatype.Sniff(data)
		if got != again || (err == nil) != (err2 == nil) {
			t.Fatalf("Sniff is not a function of the bytes: %+v %v / %+v %v", got, err, again, err2)
		}
		if err != nil {
			return
		}
		if !mediatype.Allowed(got.MIME) || strings.Contains(got.MIME, "html") || strings.Contains(got.MIME, "svg") {
			t.Fatalf("accepted as %q", got.MIME)
		}
	})
}
