package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

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
