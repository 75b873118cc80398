package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/repo"
)

// genBody streams head, n items made by item, and tail, without holding
// the whole body in memory, and counts what the server read of it.
type genBody struct {
	head, tail string
	n          int
	item       func(i int) string
	i          int
	buf        []byte
	read       atomic.Int64
	started    chan struct{} // closed at the first Read
	gate       chan struct{} // when set, Read blocks after gateAt items until it is closed
	gateAt     int
}

func (g *genBody) Read(p []byte) (int, error) {
	if g.started != nil {
		close(g.started)
		g.started = nil
	}
	for len(g.buf) < len(p) && g.i <= g.n+1 {
		if g.gate != nil && g.i == g.gateAt+1 {
			<-g.gate
			g.gate = nil
		}
		switch {
		case g.i == 0:
			g.buf = append(g.buf, g.head...)
		case g.i <= g.n:
			if g.i > 1 {
				g.buf = append(g.buf, ',')
			}
			g.buf = append(g.buf, g.item(g.i-1)...)
		default:
			g.buf = append(g.buf, g.tail...)
		}
		g.i++
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	g.read.Add(int64(n))
	return n, nil
}

func (g *genBody) size() int {
	n := len(g.head) + len(g.tail) + g.n - 1
	for i := 0; i < g.n; i++ {
		n += len(g.item(i))
	}
	return n
}

// serve runs one request through the handler in this process.
func (e *env) serve(method, path, token string, body io.Reader) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, body)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	e.srv.Handler().ServeHTTP(rec, req)
	return rec
}

// A save of 100,000 new blocks (5.4 MB) is refused as soon as its
// decoder passes the limit on changes, having read a fraction of the body,
// and it changes nothing; another author's save completes while the huge
// one is still being sent.
func TestHTTPHugeSaveRefused(t *testing.T) {
	e := newEnv(t, nil)
	e.ok("POST", "/v1/docs", e.admin, map[string]any{"id": "big", "owner": "ann", "attrs": map[string]string{"title": "Big"}}, nil)
	e.ok("POST", "/v1/docs", e.admin, map[string]any{"id": "other", "owner": "bob", "attrs": map[string]string{"title": "Other"}}, nil)
	var before repo.Draft
	e.ok("GET", "/v1/docs/big/draft", e.ann, nil, &before)

	body := &genBody{head: `{"baseSeq":1,"changes":[`, tail: `]}`, n: 100000,
		item: func(i int) string {
			return fmt.Sprintf(`{"op":"upsert","block":{"id":"n%d","type":"paragraph","richText":[{"text":"inserted %d"}]}}`, i, i)
		},
		started: make(chan struct{}), gate: make(chan struct{}), gateAt: 1000}
	started, gate := body.started, body.gate // the reader clears its fields
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- e.serve("POST", "/v1/docs/big/draft", e.ann, body) }()

	// The huge save is being read (its first 1,000 changes are in); another
	// author saves meanwhile.
	<-started
	e.ok("POST", "/v1/docs/other/draft", e.bob, map[string]any{"baseSeq": 1,
		"changes": []any{map[string]any{"op": "upsert", "block": para("p1", "saved meanwhile")}}}, nil)
	close(gate)

	rec := <-done
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("100k-change save: status %d: %s", rec.Code, rec.Body)
	}
	if er := errOf(t, rec.Body.Bytes()); er.Code != repo.CodeTooManyChanges || !strings.Contains(er.Message, "at most 4000 changes") {
		t.Errorf("100k-change save answered %+v", er)
	}
	if read, total := body.read.Load(), int64(body.size()); read > total/10 {
		t.Errorf("the server read %d of the %d bytes of a body it had to refuse after 4,001 changes", read, total)
	}
	var after repo.Draft
	e.ok("GET", "/v1/docs/big/draft", e.ann, nil, &after)
	if after.Seq != before.Seq || after.Fingerprint != before.Fingerprint {
		t.Errorf("refused save changed the draft: seq %d -> %d", before.Seq, after.Seq)
	}
}

// A 36 MB body with a million blocks is refused at the block limit while
// it is decoded: the request allocates a bounded amount, not memory in
// proportion to the body (it used about 1 GB).
func TestHTTPMillionBlockBodyBoundedMemory(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxBody = 64 << 20 }) // the count, not the byte limit, must stop it
	e.ok("POST", "/v1/docs", e.admin, map[string]any{"id": "big", "owner": "ann", "attrs": map[string]string{"title": "Big"}}, nil)
	for _, tt := range []struct{ path, head, tail string }{
		{"/v1/docs/big/draft", `{"baseSeq":1,"body":{"schemaVersion":1,"blocks":[`, `]}}`},
		{"/v1/docs", `{"attrs":{"title":"T"},"body":{"blocks":[`, `]}}`},
	} {
		body := &genBody{head: tt.head, tail: tt.tail, n: 1000000,
			item: func(i int) string { return fmt.Sprintf(`{"id":"b%d","type":"paragraph"}`, i) }}
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		rec := e.serve("POST", tt.path, e.ann, body)
		took := time.Since(start)
		runtime.ReadMemStats(&m1)
		if rec.Code != http.StatusRequestEntityTooLarge || errOf(t, rec.Body.Bytes()).Code != repo.CodeTooManyBlocks {
			t.Fatalf("POST %s with a million blocks: %d %s", tt.path, rec.Code, rec.Body)
		}
		t.Logf("POST %s: refused in %v, %d KiB allocated, %d KiB of the body read, process memory %d MiB",
			tt.path, took, (m1.TotalAlloc-m0.TotalAlloc)>>10, body.read.Load()>>10, m1.Sys>>20)
		if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 64<<20 {
			t.Errorf("POST %s with a million blocks allocated %d MiB", tt.path, alloc>>20)
		}
		if read := body.read.Load(); read > 4<<20 {
			t.Errorf("POST %s: the server read %d bytes of a body it refused at block 10,001", tt.path, read)
		}
	}
}
