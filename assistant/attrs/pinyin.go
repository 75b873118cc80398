package attrs

import (
	_ "embed"
	"strconv"
	"strings"
	"sync"
)

// pinyinTable is the toneless pinyin of each Chinese character a slug may
// hold, one "HEX SYLLABLE" line per code point, in code point order: the
// first reading go-pinyin gives with its Normal style (the test compares
// them and rewrites the file with -update). It is read on the first slug
// that needs it, not when the program starts: go-pinyin builds a map of
// 40,000 entries in its package initialisation, which every folio
// command paid for.
//
//go:embed pinyin.txt
var pinyinTable string

var pinyinMap = sync.OnceValue(func() map[rune]string {
	m := make(map[rune]string, strings.Count(pinyinTable, "\n"))
	for line := range strings.Lines(pinyinTable) {
		hex, py, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		if !ok {
			continue
		}
		if c, err := strconv.ParseUint(hex, 16, 32); err == nil {
			m[rune(c)] = py
		}
	}
	return m
})

// pinyinOf is the toneless pinyin of c ("" for none).
func pinyinOf(c rune) string { return pinyinMap()[c] }
