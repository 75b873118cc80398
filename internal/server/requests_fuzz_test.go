package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
)

// fuzzServer is a Server over a store with small request limits, so that
// a fuzzer reaches them.
func fuzzServer(f *testing.F) *Server {
	f.Helper()
	dir := f.TempDir()
	if err := repo.Init(dir); err != nil {
		f.Fatal(err)
	}
	r, err := repo.Open(dir, repo.Options{Limits: flowdoc.Limits{MaxBlocks: 50}, MaxChanges: 20, MaxRuns: 200})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })
	return &Server{content: r} // the decoders need only the content service's limits
}

// fuzzBody runs decode on data as a request body and checks what every
// request decoder promises: no panic; an error that has a kind (never an
// unclassified one); a refusal at a count limit names it; and allocation
// bounded by the input's size, not by what it claims.
func fuzzBody(t *testing.T, data []byte, decode func(*http.Request) (flowdoc.Counts, error)) {
	req := httptest.NewRequest("POST", "/", bytes.NewReader(data))
	req.Body = http.MaxBytesReader(httptest.NewRecorder(), req.Body, 1<<20)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	n, err := decode(req)
	runtime.ReadMemStats(&m1)
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 64*uint64(len(data))+1<<20 {
		t.Fatalf("decoding %d bytes allocated %d", len(data), alloc)
	}
	if err != nil {
		if k := errs.KindOf(err); k != errs.Invalid && k != errs.TooLarge && k != errs.Canceled {
			t.Fatalf("error of kind %s: %v", k, err)
		}
		return
	}
	if !json.Valid(data) && len(bytes.TrimSpace(data)) > 0 {
		t.Fatalf("accepted invalid JSON %q", data)
	}
	if n.Blocks > 50 || n.Runs > 200 {
		t.Fatalf("accepted %d blocks, %d runs past the limits", n.Blocks, n.Runs)
	}
}

var saveSeeds = []string{
	`{"baseSeq":1,"changes":[{"op":"upsert","block":{"id":"p1","type":"paragraph","richText":[{"text":"hi","marks":["bold"]}]},"after":""},{"op":"delete","blockId":"p2"},{"op":"move","blockId":"p3","after":"p1"}]}`,
	`{"baseSeq":2,"body":{"schemaVersion":1,"blocks":[{"id":"t","type":"table","rows":[{"cells":[[{"text":"a"}],null]}]},{"id":"l","type":"list","items":[{"richText":[{"text":"x"}],"items":[{"richText":[]}]}]},{"id":"c","type":"columns","columns":[{"blocks":[{"id":"d","type":"details","children":[]}]}]}]},"attrs":{"title":"T","tags":["a"]},"seal":"manual","message":"m","session":"s"}`,
	`{"baseSeq":1,"changes":[{"op":"upsert","block":{"id":"p1","id":"p2"}}]}`,
	`{"baseSeq":1,"attrs":{"title":"\ud800"}}`,
	"{\"baseSeq\":1,\"attrs\":{\"title\":\"\xff\"}}",
	`{"baseSeq":-1,"changes":{}}`,
	`[[[[[[[[[[[[[[[[[[[[`,
}

func FuzzSaveBody(f *testing.F) {
	s := fuzzServer(f)
	for _, seed := range saveSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzBody(t, data, func(r *http.Request) (flowdoc.Counts, error) {
			sb, err := s.decodeSave(r)
			if err != nil {
				return flowdoc.Counts{}, err
			}
			if len(sb.changes) > 20 {
				t.Fatalf("accepted %d changes past the limit of 20", len(sb.changes))
			}
			var c flowdoc.Counts
			if sb.body != nil {
				if err := c.Add(sb.body.Blocks, flowdoc.DecodeLimits{}); err != nil {
					t.Fatal(err)
				}
			}
			for _, ch := range sb.changes {
				if ch.Block != nil {
					c.Add([]flowdoc.Block{*ch.Block}, flowdoc.DecodeLimits{})
				}
			}
			return c, nil
		})
	})
}

func FuzzCreateBody(f *testing.F) {
	s := fuzzServer(f)
	f.Add([]byte(`{"id":"d1","owner":"author-a","attrs":{"title":"T","summary":"s","slug":"a-b","category":"c","status":"draft","visibility":"public"},"body":{"blocks":[{"id":"p","type":"paragraph","richText":[{"text":"x"}]}]},"message":"m"}`))
	f.Add([]byte(`{"attrs":null,"body":null}`))
	f.Add([]byte(`{"attrs":{"title":"a","title":"b"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzBody(t, data, func(r *http.Request) (flowdoc.Counts, error) {
			cb, err := s.decodeCreate(r)
			var c flowdoc.Counts
			if err == nil && cb.body != nil {
				c.Add(cb.body.Blocks, flowdoc.DecodeLimits{})
			}
			return c, err
		})
	})
}

func FuzzCheckpointRestoreBody(f *testing.F) {
	s := fuzzServer(f)
	for _, seed := range []string{``, `{}`, `{"reason":"manual","message":"m"}`, `{"label":"v1.r0","block":"p1"}`, `{"reason":1}`, `{"label":"v1","label":"v2"}`, `null`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzBody(t, data, func(r *http.Request) (flowdoc.Counts, error) {
			_, err := s.decodeCheckpoint(r)
			return flowdoc.Counts{}, err
		})
		fuzzBody(t, data, func(r *http.Request) (flowdoc.Counts, error) {
			_, err := s.decodeRestore(r)
			var ve *flowdoc.ValidationError
			if err != nil && errors.As(err, &ve) && len(ve.Problems) == 0 {
				t.Fatal("a validation error without problems")
			}
			return flowdoc.Counts{}, err
		})
	})
}
