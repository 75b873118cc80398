package style

import (
	"fmt"
	"strings"
	"testing"

	"github.com/foliodev/folio/persona/source"
)

// BenchmarkBuild50 builds a profile of 50 articles of about 3,000
// characters each (8 paragraphs, headings, a list and a quote).
//
//	go test -run '^$' -bench Build50 ./persona/style
func BenchmarkBuild50(b *testing.B) {
	var docs []source.Document
	base := corpus(b, "plain", 50, 0)
	for i, d := range base {
		blocks := []string{"h:第一部分"}
		for k := 0; k < 4; k++ {
			for _, bl := range d.Blocks {
				blocks = append(blocks, "p:"+bl.Text+"我在2019年去了北京，后来又回到上海。为什么？因为我想写 Go 代码！")
			}
		}
		blocks = append(blocks, "l:第一项", "l:第二项", "q:"+strings.Repeat("引用", 20), "h:第二部分")
		docs = append(docs, doc(b, fmt.Sprintf("a%d", i), blocks...))
	}
	chars := 0
	for _, d := range docs {
		for _, bl := range d.Blocks {
			chars += len([]rune(bl.Text))
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Build(docs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(chars)/50, "chars/article")
}
