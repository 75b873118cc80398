package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCP measures one read tool call (read_document) and one
// proposal (propose_operations) over stdio (`folio mcp` on a data
// directory, a child process) and over HTTP (the daemon's /v1/mcp, a
// child process), reporting p50 and p99 in milliseconds. The per-token
// proposal rate is lifted in the child (FOLIO_TEST_NO_AGENT_RATE) so
// that proposals are measured, not the limiter:
//
//	go test ./cmd/folio -run '^$' -bench BenchmarkMCP -benchtime 200x
func BenchmarkMCP(b *testing.B) {
	for _, k := range []string{"FOLIO_SERVER", "FOLIO_TOKEN", "FOLIO_DATA", "FOLIO_CONFIG", "FOLIO_LISTEN"} {
		b.Setenv(k, "")
	}
	b.Setenv("FOLIO_USER", "admin")
	b.Setenv("FOLIO_TEST_NO_AGENT_RATE", "1")
	tmp := b.TempDir()
	body := filepath.Join(tmp, "body.json")
	if err := os.WriteFile(body, []byte(assistBody), 0o644); err != nil {
		b.Fatal(err)
	}
	sessions := map[string]func(b *testing.B) *sdk.ClientSession{
		"stdio": func(b *testing.B) *sdk.ClientSession {
			dir := filepath.Join(tmp, "stdio")
			for _, args := range [][]string{{"init"}, {"user", "add", "admin", "--admin"}, {"doc", "new", "--id", "d1", "--title", "Notes", "--from", body}} {
				if r := runCLI(append([]string{"--data", dir}, args...)...); r.code != 0 {
					b.Fatalf("%v: %+v", args, r)
				}
			}
			return mcpChildTB(b, "bench", nil, "--data", dir)
		},
		"http": func(b *testing.B) *sdk.ClientSession {
			d := startDaemon(b, filepath.Join(tmp, "http"), "")
			remote := []string{"--server", d.url, "--token", d.token}
			if r := runCLI(append(remote, "doc", "new", "--id", "d1", "--title", "Notes", "--from", body)...); r.code != 0 {
				b.Fatalf("doc new: %+v", r)
			}
			r := runCLI(append(remote, "token", "add", "admin", "--kind", "agent", "--format", "json")...)
			var it struct{ Token string }
			if err := json.Unmarshal([]byte(r.stdout), &it); err != nil {
				b.Fatalf("token: %+v", r)
			}
			c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: d.url + server.MCPPath,
				HTTPClient: &http.Client{Transport: benchBearer{it.Token}}, DisableStandaloneSSE: true}, nil)
			if err != nil {
				b.Fatal(err)
			}
			return cs
		},
	}
	for _, transport := range []string{"stdio", "http"} {
		cs := sessions[transport](b) // on the parent: its cleanups outlive the runs
		calls := map[string]func(i int) *sdk.CallToolParams{
			"read": func(int) *sdk.CallToolParams {
				return &sdk.CallToolParams{Name: "read_document", Arguments: map[string]any{"doc": "d1"}}
			},
			"propose": func(i int) *sdk.CallToolParams {
				return &sdk.CallToolParams{Name: "propose_operations", Arguments: map[string]any{"doc": "d1", "base": "v1.r0",
					"scope": map[string]any{"kind": "block", "block": "p3"},
					"ops": []map[string]any{{"op": "replace_block", "blockId": "p3", "block": map[string]any{"id": "p3", "type": "paragraph",
						"richText": []map[string]any{{"text": fmt.Sprintf("Table %d has the results.", i)}}}}}}}
			},
		}
		for _, name := range []string{"read", "propose"} {
			b.Run(transport+"/"+name, func(b *testing.B) {
				ds := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					start := time.Now()
					res, err := cs.CallTool(context.Background(), calls[name](i))
					if err != nil || res.IsError {
						b.Fatalf("%s: %v %+v", name, err, res)
					}
					ds = append(ds, time.Since(start))
				}
				b.StopTimer()
				slices.Sort(ds)
				b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(ds[min(len(ds)-1, len(ds)*99/100)].Microseconds())/1000, "p99-ms")
			})
		}
		cs.Close()
	}
}

type benchBearer struct{ token string }

func (bb benchBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+bb.token)
	return http.DefaultTransport.RoundTrip(r)
}
