package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/errs"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioPeer serves NewServer over pipes and returns the client's ends.
func stdioPeer(t *testing.T) (io.WriteCloser, *bufio.Reader, chan error) {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	s := NewServer(func(context.Context, *sdk.RequestExtra) (Backend, error) {
		return nil, errs.E(errs.NotFound, "no documents here")
	}, Options{Version: "test"})
	done := make(chan error, 1)
	go func() { done <- ServeStdio(context.Background(), s, sr, sw) }()
	t.Cleanup(func() { cw.Close(); sw.Close() })
	r := bufio.NewReaderSize(cr, 1<<20)
	send := func(line string) {
		if _, err := io.WriteString(cw, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return cw, r, done
}

// TestStdioDeepJSON: arguments nested far deeper than any schema allows
// are answered with an error, and the server keeps serving.
func TestStdioDeepJSON(t *testing.T) {
	cw, r, _ := stdioPeer(t)
	deep := strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000)
	io.WriteString(cw, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_document","arguments":`+deep+`}}`+"\n")
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, `"error"`) && !strings.Contains(line, `"isError":true`) {
		t.Fatalf("deep arguments answered %.300s", line)
	}
	io.WriteString(cw, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_log","arguments":{"doc":"d1"}}}`+"\n")
	line, err = r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		ID     int `json:"id"`
		Result struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(line), &resp) != nil || resp.ID != 3 || !resp.Result.IsError || !strings.Contains(line, "not_found") {
		t.Fatalf("after deep JSON: %.300s", line)
	}
}

// TestStdioOversizeMessage: a 10 MB message is answered with an error
// naming the limit, without being held whole, and the connection goes on.
func TestStdioOversizeMessage(t *testing.T) {
	cw, r, _ := stdioPeer(t)
	chunk := []byte(strings.Repeat("x", 64<<10))
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	go func() {
		io.WriteString(cw, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_document","arguments":{"doc":"`)
		for i := 0; i < 160; i++ { // 10 MiB
			cw.Write(chunk)
		}
		io.WriteString(cw, `"}}}`+"\n")
	}()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, `"id":2`) || !strings.Contains(line, "message over") {
		t.Fatalf("a 10 MB message answered %.300s", line)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.TotalAlloc) - int64(before.TotalAlloc); grew > 3*MaxMessage {
		t.Fatalf("%d bytes allocated for one refused 10 MiB message", grew)
	}
	io.WriteString(cw, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_log","arguments":{"doc":"d1"}}}`+"\n")
	if line, err = r.ReadString('\n'); err != nil || !strings.Contains(line, `"id":3`) {
		t.Fatalf("after the refused message: %v %.300s", err, line)
	}
}
