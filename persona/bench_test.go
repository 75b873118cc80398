package persona

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/persona/index"
)

// BenchmarkGenerate50 generates a persona version (style, learning,
// memory, one synced batch, index outbox applied) from 50 published
// articles of about 1,500 characters each. The first generation extracts
// the memory observations; later ones reuse them.
//
//	go test -run '^$' -bench Generate50 -benchtime 10x ./persona
func BenchmarkGenerate50(b *testing.B) {
	dir := b.TempDir()
	db, err := kv.Open(dir, kv.Options{Create: true, MinFree: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	idx, err := index.Open(context.Background(), db, filepath.Join(dir, "index"), IndexSource(), index.Options{Manual: true, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close(context.Background())
	svc := New(db, idx, allOn, Options{})
	src := newSources()
	places := []string{"北京", "上海", "杭州", "成都", "深圳"}
	var ids []string
	for a := 0; a < 50; a++ {
		var paras []string
		for p := 0; p < 12; p++ {
			paras = append(paras, fmt.Sprintf("%d年我在%s工作，负责第%d个项目。", 2000+(a+p)%25, places[(a+p)%len(places)], p)+
				strings.Repeat("后来我们把方案改得更简单，读者的反馈也更好。", 4)+"为什么要这样写？因为清楚的句子更好读。")
		}
		doc := fmt.Sprintf("d%02d", a)
		src.publish("author-a", doc, VisibilityPublic, 1, paras...)
		ids = append(ids, doc)
	}
	p, err := svc.Create(context.Background(), "author-a", "bench", ids)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := svc.Generate(context.Background(), GenerateRequest{User: "author-a", Persona: p.ID}, src, nil); err != nil {
			b.Fatal(err)
		}
		if err := idx.Drain(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
