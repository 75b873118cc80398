package main

import (
	"bytes"
	"strings"
	"testing"
	"text/tabwriter"
)

// The table lays ASCII out byte for byte as text/tabwriter does, column
// blocks included.
func TestTableMatchesTabwriterOnASCII(t *testing.T) {
	for _, in := range []string{
		"ID\tHEAD\tTITLE\nd1\tv1.r0\tFirst\nlonger-id\tv12.r3\tSecond\n",
		"a\tb\nno tabs here\nccc\td\te\n\nx\ty\n",
		"a\tbb\tc\naaa\tb\n\tlast\n",
		"one line no newline\tz",
		"",
	} {
		var want, got bytes.Buffer
		tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
		tw.Write([]byte(in))
		tw.Flush()
		tb := newTable(&got)
		tb.Write([]byte(in))
		tb.Flush()
		if got.String() != want.String() {
			t.Errorf("table(%q) =\n%q\ntabwriter:\n%q", in, got.String(), want.String())
		}
	}
}

// Chinese, fullwidth and combining text take their display width, so the
// column after them starts at the same terminal column on every line.
func TestTableAlignsByDisplayWidth(t *testing.T) {
	var out bytes.Buffer
	tb := newTable(&out)
	tb.Write([]byte("TITLE\tHEAD\n公园散步\tv1.r0\nWalk\tv1.r1\nＡＢ\tv2.r0\ncafe\u0301\tv3.r0\n"))
	tb.Flush()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for _, l := range lines {
		i := strings.Index(l, "v")
		if i < 0 {
			i = strings.Index(l, "HEAD")
		}
		if w := cellWidth(l[:i]); w != 10 {
			t.Errorf("%q: the second column starts at cell %d, want 10", l, w)
		}
	}
	for s, want := range map[string]int{"abc": 3, "中文": 4, "ｶﾀ": 2, "e\u0301": 1, "😀": 2, "\x1b": 0} {
		if got := cellWidth(s); got != want {
			t.Errorf("cellWidth(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestSizeByMagnitude(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1: "1 byte", 1023: "1023 bytes", 1024: "1.0 KiB", 1536: "1.5 KiB",
		5 << 20: "5.0 MiB", 3<<30 + 1<<29: "3.5 GiB", 2048 << 30: "2048.0 GiB"} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q, want %q", n, got, want)
		}
	}
}
