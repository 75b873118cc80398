package assistant

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/llm"
)

// quantiles reports p50 and p99 of ds in milliseconds under names.
func quantiles(b *testing.B, ds []time.Duration, prefix string) {
	if len(ds) == 0 {
		return
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(p float64) float64 {
		i := min(len(s)-1, int(p*float64(len(s))))
		return float64(s[i]) / float64(time.Millisecond)
	}
	b.ReportMetric(q(0.50), prefix+"p50-ms")
	b.ReportMetric(q(0.99), prefix+"p99-ms")
}

// benchWorld is a world on a 500-block article whose model answers at
// once with a precomputed edit of the scoped block (or the whole body).
func benchWorld(b *testing.B) (*world, string) {
	w := newWorld(b)
	d := flowdoc.Document{SchemaVersion: 1}
	for i := 1; i <= 500; i++ {
		d.Blocks = append(d.Blocks, para(fmt.Sprintf("p%d", i), fmt.Sprintf("Paragraph %d of the benchmark article, about 四百字 of text %s.", i, strings.Repeat("word ", 20))))
	}
	v, err := w.repo.CreateDoc(ctx, repoCreate(d))
	if err != nil {
		b.Fatal(err)
	}
	var docAnswer string
	w.model.answer = func(req llm.Request) string {
		scope, _ := requestContent(req)
		if id, ok := strings.CutPrefix(scope, "block:"); ok {
			return `{"summary":"tighter","ops":[{"op":"replace_block","blockId":"` + id + `","block":{"type":"paragraph","richText":[{"text":"A tighter paragraph ` + id + `."}]}}]}`
		}
		if docAnswer == "" {
			docAnswer = autoAnswer(req)
		}
		return docAnswer
	}
	return w, v.Doc
}

// BenchmarkRequestToSuggestion measures a request from Assist to its
// suggestion committed (suggestion.created), on a 500-block article, with
// a model that answers at once. provider-ms is the model's own time,
// overhead-* the rest.
func BenchmarkRequestToSuggestion(b *testing.B) {
	for _, scope := range []string{"block", "document"} {
		b.Run(scope, func(b *testing.B) {
			w, doc := benchWorld(b)
			var total, overhead []time.Duration
			var provider time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sc := Scope{Kind: ScopeDocument}
				if scope == "block" {
					sc = Scope{Kind: ScopeBlock, Block: fmt.Sprintf("p%d", 1+i%500)}
				}
				w.model.mu.Lock()
				before := w.model.elapsed
				w.model.mu.Unlock()
				start := time.Now()
				q, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: sc, Instruction: "tighten"})
				if err != nil {
					b.Fatal(err)
				}
				run := w.wait(q.Run.ID)
				d := time.Since(start)
				if run.Suggestion == "" {
					b.Fatalf("run %s: %s %+v", run.ID, run.Outcome, run.Error)
				}
				w.model.mu.Lock()
				p := w.model.elapsed - before
				w.model.mu.Unlock()
				provider += p
				total = append(total, d)
				overhead = append(overhead, d-p)
			}
			b.StopTimer()
			quantiles(b, total, "")
			quantiles(b, overhead, "overhead-")
			b.ReportMetric(float64(provider)/float64(b.N)/float64(time.Millisecond), "provider-ms/op")
		})
	}
}

// BenchmarkAccept measures accepting a block suggestion on a 500-block
// article: the four baseline checks, the commit of the new revision with
// its suggestion status, observation and events.
func BenchmarkAccept(b *testing.B) {
	w, doc := benchWorld(b)
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		sg := w.suggest(doc, Scope{Kind: ScopeBlock, Block: fmt.Sprintf("p%d", 1+i%500)})
		b.StartTimer()
		start := time.Now()
		if _, err := w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	quantiles(b, lat, "")
}
