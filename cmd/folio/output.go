package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// termText makes a value read from the store safe to print as text on a
// terminal: control characters (C0, DEL, C1: ESC, BEL, CR, newlines and
// tabs included) and the bidirectional formatting characters that reorder
// what is displayed are written as escapes (\x1b, \n, \u202e), and bytes
// that are not UTF-8 as \xff. The content service refuses control
// characters in metadata since they could clear a screen or fake output
// lines; older stores, imported packs and document text may still hold
// them, so every user-provided string in text output passes here. JSON
// output needs nothing: its encoder escapes what it must.
func termText(s string) string {
	clean := true
	for _, c := range s {
		if c == utf8.RuneError || unicode.IsControl(c) || bidiControl(c) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x100 && unicode.IsControl(c):
			fmt.Fprintf(&b, `\x%02x`, c)
		case unicode.IsControl(c) || bidiControl(c):
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// bidiControl reports the characters that change the display order of
// the text around them (embeddings, overrides, isolates).
func bidiControl(c rune) bool {
	return c >= 0x202a && c <= 0x202e || c >= 0x2066 && c <= 0x2069
}
