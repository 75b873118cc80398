package reading

import (
	"fmt"
	"testing"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
)

func benchArticle(n int) flowdoc.Document {
	d := flowdoc.Document{SchemaVersion: 1}
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			d.Blocks = append(d.Blocks, heading(fmt.Sprintf("h%d", i), fmt.Sprintf("Section %d on refs", i/10)))
		}
		d.Blocks = append(d.Blocks, para(fmt.Sprintf("p%d", i), fmt.Sprintf("Paragraph %d: a ref is a named pointer to a version. Versions never change. 检查点把草稿封存成版本。", i)))
	}
	return d
}

// BenchmarkExplainLocal is the reading assistant's cost per request on the
// local provider, without HTTP: a model call (the extractive engine over a
// 200-paragraph article, the policy, the ledger's safe booking) and a
// cache hit.
func BenchmarkExplainLocal(b *testing.B) {
	db := openDB(b, b.TempDir())
	defer db.Close()
	cfg := config.DefaultReading()
	cfg.VisitorPerMinute, cfg.AddressPerMinute = 1<<30, 1<<30
	s, err := New(Options{Route: assistant.Route{Provider: llm.NewLocal(""), Policy: quota.NewPolicy(db, quota.Reading, quota.Limits{}, nil)},
		Ledger: quota.NewLedger(db, quota.LedgerOptions{}), Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	body := benchArticle(200)
	emit := func(Event) error { return nil }
	b.Run("model-call", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			req := Request{Version: "v1", Body: body, Passage: fmt.Sprintf("Paragraph %d", i), Block: fmt.Sprintf("p%d", i%200), Visitor: fmt.Sprint(i), Addr: "a"}
			if err := s.Explain(ctx, req, emit); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cache-hit", func(b *testing.B) {
		req := Request{Version: "v1", Body: body, Passage: "Paragraph 7", Block: "p7", Visitor: "x", Addr: "a"}
		if err := s.Explain(ctx, req, emit); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			req.Visitor = fmt.Sprint(i)
			if err := s.Explain(ctx, req, emit); err != nil {
				b.Fatal(err)
			}
		}
	})
}
