package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo"
)

// BenchmarkHTTPSave measures durable one-block draft saves through the
// HTTP API, 4 clients on their own documents (each save is synced before
// its answer).
func BenchmarkHTTPSave(b *testing.B) {
	e := newEnv(b, nil)
	const clients = 4
	for k := 0; k < clients; k++ {
		e.ok("POST", "/v1/docs", e.admin, CreateRequest{ID: fmt.Sprintf("b%d", k), Owner: "ann", Attrs: flowdoc.Attributes{Title: "B"}, Body: doc(para("p1", "x"), para("p2", "y"))}, nil)
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N/clients + 1
	for k := 0; k < clients; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			seq := uint64(1)
			for i := 0; i < per; i++ {
				blk := para("p1", fmt.Sprintf("save %d", i))
				data, _ := json.Marshal(SaveRequest{BaseSeq: seq, Changes: []repo.DraftChange{{Op: "upsert", Block: &blk}}})
				req, _ := http.NewRequest("POST", fmt.Sprintf("%s/v1/docs/b%d/draft", e.ts.URL, k), bytes.NewReader(data))
				req.Header.Set("Authorization", "Bearer "+e.ann)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				var res repo.SaveResult
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || json.Unmarshal(body, &res) != nil {
					b.Errorf("save: %d %s", resp.StatusCode, body)
					return
				}
				seq = res.Seq
			}
		}(k)
	}
	wg.Wait()
}

// BenchmarkHTTPAssist measures an editing-preset request on one block of
// a 500-block article through the HTTP API, from the POST to the run's
// succeeded event on its SSE stream (the suggestion is stored then), on
// the offline local provider: the transport, the service, the runner and
// the rule engine together. It reports p50 and p99 in milliseconds.
func BenchmarkHTTPAssist(b *testing.B) {
	ae := newAssistEnv(b, assistOpts{})
	blocks := make([]flowdoc.Block, 500)
	for i := range blocks {
		blocks[i] = para(fmt.Sprintf("p%d", i+1), fmt.Sprintf("In order to win paragraph %d, the team made a decision about the plan.", i+1))
	}
	var v repo.VersionInfo
	ae.ok("POST", "/v1/docs", ae.a, CreateRequest{Attrs: flowdoc.Attributes{Title: "Bench"}, Body: doc(blocks...)}, &v)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		q := ae.ask(ae.a, v.Doc, fmt.Sprintf("p%d", i%500+1))
		evs, _ := ae.sse(ae.a, q.Run.ID, "", func(ev RunEventView) bool { return ev.Type == assistant.EventSucceeded })
		lat = append(lat, time.Since(start))
		if n := len(evs); n == 0 || evs[n-1].Data.Outcome != assistant.OutcomeSuggestion {
			b.Fatalf("run %s: %v", q.Run.ID, types(evs))
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/float64(time.Millisecond), "p50-ms")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)])/float64(time.Millisecond), "p99-ms")
}
