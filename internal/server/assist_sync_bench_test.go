package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/syncproto"
)

// timedProvider adds up the time a provider spends answering (Stream and
// every Next), so that a benchmark can tell the model's time from the
// rest.
type timedProvider struct {
	llm.Provider
	mu      sync.Mutex
	elapsed time.Duration
}

func (p *timedProvider) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	start := time.Now()
	s, err := p.Provider.Stream(ctx, req)
	p.add(time.Since(start))
	if err != nil {
		return nil, err
	}
	return &timedStream{Stream: s, p: p}, nil
}

func (p *timedProvider) add(d time.Duration) {
	p.mu.Lock()
	p.elapsed += d
	p.mu.Unlock()
}

func (p *timedProvider) total() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.elapsed
}

type timedStream struct {
	llm.Stream
	p *timedProvider
}

func (s *timedStream) Next() (string, error) {
	start := time.Now()
	piece, err := s.Stream.Next()
	s.p.add(time.Since(start))
	return piece, err
}

// reportQuantiles reports p50 and p99 of ds in milliseconds.
func reportQuantiles(b *testing.B, ds []time.Duration, prefix string) {
	if len(ds) == 0 {
		return
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(p float64) float64 {
		return float64(s[min(len(s)-1, int(p*float64(len(s))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(q(0.50), prefix+"p50-ms")
	b.ReportMetric(q(0.99), prefix+"p99-ms")
}

// BenchmarkSyncAssist is an editor's round over the WebSocket on a
// 500-block article of Chinese and English paragraphs, with the offline
// local provider applying the editing preset: from sending assist.request
// to receiving the run's suggestion.created on the document's stream (the
// transport, the service, the durable runner and the rule engine; the
// provider's own time reported apart as provider-ms/op and taken out of
// overhead-*), then from sending suggestion.accept to its reply (the four
// baseline checks and the commit of the new revision) as accept-*. Every
// block is asked for once at most, so each request finds work to do.
func BenchmarkSyncAssist(b *testing.B) {
	var timed *timedProvider
	// A connection may send 20 messages a second by default; this one
	// sends as fast as it is answered.
	ae := newSyncAssistEnv(b, assistOpts{messagesPerSecond: 1e6, writing: func(p llm.Provider) llm.Provider {
		timed = &timedProvider{Provider: p}
		return timed
	}})
	blocks := make([]flowdoc.Block, 500)
	for i := range blocks {
		text := fmt.Sprintf("In order to win round %d, the team made a decision about the plan and %s.", i+1, strings.Repeat("wrote the report ", 10))
		if i%2 == 1 {
			text = fmt.Sprintf("其实第%d轮需要进行一个全面的优化，这个方案的内容%s。", i+1, strings.Repeat("十分完整", 10))
		}
		blocks[i] = para(fmt.Sprintf("p%d", i+1), text)
	}
	var v repo.VersionInfo
	ae.ok("POST", "/v1/docs", ae.a, CreateRequest{Attrs: flowdoc.Attributes{Title: "Bench"}, Body: doc(blocks...)}, &v)
	evs := newEvents()
	c := ae.dial(ae.a, syncproto.SubprotocolMsgpack, evs)
	snap, err := c.Open(context.Background(), v.Doc)
	if err != nil {
		b.Fatal(err)
	}
	round := func(block string) (suggest, provider, accept time.Duration) {
		before := timed.total()
		start := time.Now()
		q := request[*syncproto.AssistQueued](b, c, &syncproto.AssistRequest{Doc: v.Doc, Scope: blockScope(block), EditingPreset: "six-rules"})
		var sg string
		evs.wait(b, snap.Stream, func(ev *syncproto.Event) bool {
			var d syncproto.SuggestionEventData
			if ev.Type != syncproto.TypeSuggestionCreated || ev.DecodeData(&d) != nil || d.Run != q.Run.ID {
				return false
			}
			sg = d.ID
			return true
		})
		suggest, provider = time.Since(start), timed.total()-before
		start = time.Now()
		acc := request[*syncproto.SuggestionAcceptDone](b, c, &syncproto.SuggestionAccept{Suggestion: sg})
		accept = time.Since(start)
		if acc.Suggestion.Status != "accepted" {
			b.Fatalf("accept %+v", acc.Suggestion)
		}
		return suggest, provider, accept
	}
	// The first Chinese text loads the segmenter's dictionary, once per
	// process: not a request's cost.
	round("p2")
	if b.N > len(blocks)-2 {
		b.Fatalf("at most %d rounds on a %d-block article", len(blocks)-2, len(blocks))
	}
	var total, overhead, accept []time.Duration
	var provider time.Duration
	b.ResetTimer()
	for i := range b.N {
		s, p, a := round(fmt.Sprintf("p%d", 3+i))
		total, overhead, accept = append(total, s), append(overhead, s-p), append(accept, a)
		provider += p
	}
	b.StopTimer()
	reportQuantiles(b, total, "")
	reportQuantiles(b, overhead, "overhead-")
	reportQuantiles(b, accept, "accept-")
	b.ReportMetric(float64(provider)/float64(b.N)/float64(time.Millisecond), "provider-ms/op")
}
