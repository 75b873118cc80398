package persona

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/task"
	"github.com/foliodev/folio/persona/index"
)

// benchGenerate50 is a store with 50 published articles of about 1,500
// characters each and a persona over them.
func benchGenerate50(b *testing.B) (*kv.DB, *index.Index, *Service, *fakeSources, Persona) {
	dir := b.TempDir()
	db, err := kv.Open(dir, kv.Options{Create: true, MinFree: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	idx, err := index.Open(context.Background(), db, filepath.Join(dir, "index"), IndexSource(), index.Options{Manual: true, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { idx.Close(context.Background()) })
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
	return db, idx, svc, src, p
}

// BenchmarkGenerate50 generates a persona version (style, learning,
// memory, one synced batch, index outbox applied) from 50 published
// articles of about 1,500 characters each. The first generation extracts
// the memory observations; later ones reuse them.
//
//	go test -run '^$' -bench Generate50 -benchtime 10x ./persona
func BenchmarkGenerate50(b *testing.B) {
	_, idx, svc, src, p := benchGenerate50(b)
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

// BenchmarkGenerateTask50 is BenchmarkGenerate50 as the durable task a
// user starts: StartGenerate, the runner's transitions and job record,
// WaitJob.
//
//	go test -run '^$' -bench GenerateTask50 -benchtime 10x ./persona
func BenchmarkGenerateTask50(b *testing.B) {
	db, idx, svc, src, p := benchGenerate50(b)
	r, err := task.Open(db, task.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	svc.Register(r, src, nil, task.KindOptions{})
	if err := r.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer r.Close(context.Background())
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j, err := svc.StartGenerate(ctx, "author-a", p.ID)
		if err != nil {
			b.Fatal(err)
		}
		if j, err = svc.WaitJob(ctx, "author-a", j.Task); err != nil || j.State != task.Succeeded {
			b.Fatalf("job %+v: %v", j, err)
		}
		if err := idx.Drain(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// benchLargeSources is a persona over n published sources of about
// 100 KiB each (the sizes of the report of quadratic generation).
func benchLargeSources(b *testing.B, n int) (*Service, *fakeSources, Persona) {
	dir := b.TempDir()
	db, err := kv.Open(dir, kv.Options{Create: true, MinFree: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	idx, err := index.Open(context.Background(), db, filepath.Join(dir, "index"), IndexSource(), index.Options{Manual: true, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { idx.Close(context.Background()) })
	svc := New(db, idx, allOn, Options{})
	src := newSources()
	places := []string{"Berlin", "Lisbon", "Osaka", "Denver", "Tartu", "北京", "上海"}
	var ids []string
	for a := 0; a < n; a++ {
		var paras []string
		size := 0
		for p := 0; size < 100<<10; p++ {
			para := fmt.Sprintf("In %d we moved the team to %s and shipped release %d.%d of the tool. ", 1990+(a*7+p)%35, places[(a+p)%len(places)], a, p) +
				fmt.Sprintf("The review of article %d, part %d, took three weeks; ", a, p) +
				"we rewrote the parser, then the storage layer, and the readers said the pages loaded faster. " +
				"Why does this matter? Because short sentences are easier to read."
			paras = append(paras, para)
			size += len(para)
		}
		doc := fmt.Sprintf("big%03d", a)
		src.publish("author-a", doc, VisibilityPublic, 1, paras...)
		ids = append(ids, doc)
	}
	p, err := svc.Create(context.Background(), "author-a", "big", ids)
	if err != nil {
		b.Fatal(err)
	}
	return svc, src, p
}

// BenchmarkGenerateLargeSources generates a persona version from 2, 8
// and 16 sources of about 100 KiB each; the time per source must not
// grow with the number of sources.
//
//	go test -run '^$' -bench GenerateLargeSources -benchtime 1x ./persona
func BenchmarkGenerateLargeSources(b *testing.B) {
	for _, n := range []int{2, 8, 16} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			svc, src, p := benchLargeSources(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := svc.Generate(context.Background(), GenerateRequest{User: "author-a", Persona: p.ID}, src, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*n), "ms/source")
		})
	}
}
