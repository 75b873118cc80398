package flowdoc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkDiff1000Blocks10Modified(b *testing.B) {
	var a Document
	for i := 0; i < 1000; i++ {
		a.Blocks = append(a.Blocks, para(fmt.Sprintf("p%d", i),
			fmt.Sprintf("Paragraph %d has a sentence or two of ordinary text, 我们今天去公园散步, to compare.", i)))
	}
	c := a.Clone()
	for i := 0; i < 10; i++ {
		blk := &c.Blocks[i*97]
		blk.RichText = txt(blk.RichText[0].Text + " An added clause.")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ch := Diff(a, c); len(ch) != 10 {
			b.Fatalf("want 10 changes, got %d", len(ch))
		}
	}
}

func BenchmarkImportMarkdown200KB(b *testing.B) {
	sample, err := os.ReadFile(filepath.Join(goldenRoot, "markdown/sample.md"))
	if err != nil {
		b.Fatal(err)
	}
	var src bytes.Buffer
	for src.Len() < 200<<10 {
		src.Write(sample)
		src.WriteString("\n\n")
	}
	b.SetBytes(int64(src.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := ImportMarkdown(src.Bytes()); err != nil {
			b.Fatal(err)
		}
	}
}
