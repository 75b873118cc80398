package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/syncproto"
	"github.com/vmihailenco/msgpack/v5"
)

// wsEditor is one WebSocket connection to the daemon with document d1 open.
type wsEditor struct {
	t     *testing.T
	conn  *websocket.Conn
	codec string
	n     int
}

func dialEditor(t *testing.T, url, token, codec string) *wsEditor {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/v1/sync", &websocket.DialOptions{
		Subprotocols: []string{codec}, HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(16 << 20)
	t.Cleanup(func() { c.CloseNow() })
	e := &wsEditor{t: t, conn: c, codec: codec}
	if typ, _, _ := e.request(map[string]any{"type": "open", "doc": "d1"}, ""); typ != "snapshot" {
		t.Fatalf("open d1 over %s: %s", codec, typ)
	}
	return e
}

// request sends m (or raw, a JSON frame with "id":"ID" to fill in) and
// returns the type, code and message of the reply.
func (e *wsEditor) request(m map[string]any, raw string) (typ, code, msg string) {
	e.t.Helper()
	e.n++
	id := fmt.Sprint(e.n)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var frame []byte
	mt := websocket.MessageText
	switch {
	case raw != "":
		frame = []byte(strings.Replace(raw, `"id":"ID"`, `"id":"`+id+`"`, 1))
	case e.codec == syncproto.SubprotocolMsgpack:
		m["id"] = id
		var err error
		if frame, err = msgpack.Marshal(m); err != nil {
			e.t.Fatal(err)
		}
		mt = websocket.MessageBinary
	default:
		m["id"] = id
		frame, _ = json.Marshal(m)
	}
	if err := e.conn.Write(ctx, mt, frame); err != nil {
		e.t.Fatal(err)
	}
	for {
		_, data, err := e.conn.Read(ctx)
		if err != nil {
			e.t.Fatalf("waiting for the reply to %s: %v", frame[:min(len(frame), 80)], err)
		}
		var r struct {
			Type    string `json:"type" msgpack:"type"`
			ID      string `json:"id" msgpack:"id"`
			Code    string `json:"code" msgpack:"code"`
			Message string `json:"message" msgpack:"message"`
		}
		if e.codec == syncproto.SubprotocolMsgpack {
			err = msgpack.Unmarshal(data, &r)
		} else {
			err = json.Unmarshal(data, &r)
		}
		if err != nil {
			e.t.Fatal(err)
		}
		if r.ID == id {
			return r.Type, r.Code, r.Message
		}
	}
}

// The same bad input gets the same answer whichever way it comes in: the
// HTTP API, the WebSocket in either codec, and the CLI on a data
// directory. Wire codes and messages are compared as they are; the CLI's
// exit code is the one of the error's kind.
func TestSameAnswerEveryWayIn(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	ctx := context.Background()

	// The daemon, with the configuration's default limits.
	dirD := filepath.Join(tmp, "daemon")
	if err := repo.Init(dirD); err != nil {
		t.Fatal(err)
	}
	r, err := repo.Open(dirD, repoOptions(config.Default()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() }) // last: after the daemon stopped
	as := auth.New(r.DB())
	u, tok, err := as.AddUser(ctx, "author-a", false)
	if err != nil {
		t.Fatal(err)
	}
	// Document ids are the server's to choose; the test's is made here.
	if _, err := r.CreateDoc(ctx, repo.CreateParams{ID: "d1", Owner: u.ID, Author: u.Name,
		Attrs: flowdoc.Attributes{Title: "Notes"}}); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Content: r, Auth: as, Publish: publish.New(r, nil)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		ts.Close()
	})
	httpCall := func(path, body string) (string, string) {
		req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok.Secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var eb server.ErrorBody
		if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
			return fmt.Sprint(resp.StatusCode), string(data)
		}
		if k, ok := errs.KindFromCode(eb.Error.Code); ok && k.HTTPStatus() != resp.StatusCode {
			t.Errorf("POST %s: status %d for code %s", path, resp.StatusCode, eb.Error.Code)
		}
		return eb.Error.Code, eb.Error.Message
	}
	wsJSON := dialEditor(t, ts.URL, tok.Secret, syncproto.SubprotocolJSON)
	wsMsgpack := dialEditor(t, ts.URL, tok.Secret, syncproto.SubprotocolMsgpack)

	// The same store opened directly by the CLI.
	dirC := filepath.Join(tmp, "direct")
	if res := runCLI("--data", dirC, "init"); res.code != 0 {
		t.Fatalf("init: %+v", res)
	}
	if res := runCLI("--data", dirC, "doc", "new", "--id", "d1", "--title", "Notes"); res.code != 0 {
		t.Fatalf("doc new: %+v", res)
	}
	cli := func(args ...string) (int, string) {
		res := runCLI(append([]string{"--data", dirC}, args...)...)
		return res.code, strings.TrimSuffix(strings.TrimPrefix(res.stderr, "folio: "), "\n")
	}

	deletes := make([]any, 4001)
	for i := range deletes {
		deletes[i] = map[string]any{"op": "delete", "blockId": fmt.Sprintf("b%d", i)}
	}
	// msgpack frames carry bodies in the canonical (storage) field names.
	var blocks, mpBlocks []any
	var blocksJSON bytes.Buffer
	blocksJSON.WriteString(`{"schemaVersion":1,"blocks":[`)
	for i := 0; i < 20001; i++ {
		blocks = append(blocks, map[string]any{"id": fmt.Sprintf("b%d", i), "type": "paragraph"})
		mpBlocks = append(mpBlocks, map[string]any{"id": fmt.Sprintf("b%d", i), "t": "paragraph"})
		if i > 0 {
			blocksJSON.WriteByte(',')
		}
		fmt.Fprintf(&blocksJSON, `{"id":"b%d","type":"paragraph"}`, i)
	}
	blocksJSON.WriteString(`]}`)
	bigBody := write(t, tmp, "big.json", blocksJSON.String())
	smallBody := write(t, tmp, "small.json", `{"schemaVersion":1,"blocks":[{"id":"p1","type":"paragraph","richText":[{"text":"x"}]}]}`)
	long := strings.Repeat("x", 5000)

	type entry struct {
		name string
		do   func() (code, msg string)
	}
	httpE := func(path, body string) entry {
		return entry{"HTTP POST " + path, func() (string, string) { return httpCall(path, body) }}
	}
	wsE := func(e *wsEditor, m map[string]any) entry {
		return entry{"WebSocket " + e.codec, func() (string, string) {
			c := map[string]any{}
			for k, v := range m {
				c[k] = v
			}
			typ, code, msg := e.request(c, "")
			if code == "" {
				return typ, msg
			}
			return code, msg
		}}
	}
	wsRaw := func(e *wsEditor, frame string) entry {
		return entry{"WebSocket " + e.codec, func() (string, string) {
			_, code, msg := e.request(nil, frame)
			return code, msg
		}}
	}
	cliE := func(args ...string) entry {
		return entry{"CLI " + strings.Join(args[:2], " "), func() (string, string) {
			code, msg := cli(args...)
			return fmt.Sprintf("exit %d", code), msg
		}}
	}
	save := func(extra map[string]any) map[string]any {
		m := map[string]any{"type": "draft.save", "doc": "d1", "baseSeq": 1}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	checkpoint := func(reason, message string) map[string]any {
		return map[string]any{"type": "checkpoint", "doc": "d1", "reason": reason, "message": message}
	}

	tests := []struct {
		name     string
		code     string // the wire code
		msg      string
		ways     []entry
		cliWays  []entry // the CLI's answer: the message, with the exit code of the code's kind
		cliMatch string  // for the CLI, when its message is a sentence around msg
	}{
		{
			name: "escape sequence in a title",
			code: "invalid", msg: "attrs.title: control character U+001B at byte 5 is not allowed; remove it",
			ways: []entry{
				httpE("/v1/docs", `{"attrs":{"title":"Notes\u001b[2J"}}`),
				httpE("/v1/docs/d1/draft", `{"baseSeq":1,"attrs":{"title":"Notes\u001b[2J"}}`),
				wsE(wsJSON, save(map[string]any{"attrs": map[string]any{"title": "Notes\x1b[2J"}})),
				wsE(wsMsgpack, save(map[string]any{"attrs": map[string]any{"title": "Notes\x1b[2J"}})),
			},
			cliWays: []entry{cliE("doc", "new", "--title", "Notes\x1b[2J")},
		},
		{
			name: "bell in a version message",
			code: "invalid", msg: "message: control character U+0007 at byte 4 is not allowed; remove it",
			ways: []entry{
				httpE("/v1/docs/d1/checkpoint", `{"message":"done\u0007"}`),
				wsE(wsJSON, checkpoint("manual", "done\a")),
				wsE(wsMsgpack, checkpoint("manual", "done\a")),
			},
			cliWays: []entry{cliE("doc", "save", "d1", "--from", smallBody, "--checkpoint", "-m", "done\a")},
		},
		{
			name: "carriage return in a title",
			code: "invalid", msg: "attrs.title: control character U+000D at byte 3 is not allowed; remove it",
			ways: []entry{
				httpE("/v1/docs/d1/draft", `{"baseSeq":1,"attrs":{"title":"one\rtwo"}}`),
				wsE(wsJSON, save(map[string]any{"attrs": map[string]any{"title": "one\rtwo"}})),
				wsE(wsMsgpack, save(map[string]any{"attrs": map[string]any{"title": "one\rtwo"}})),
			},
			cliWays: []entry{cliE("doc", "new", "--title", "one\rtwo")},
		},
		{
			name: "a version message over its limit",
			code: "invalid", msg: "message: is 5000 bytes; the limit is 4096",
			ways: []entry{
				httpE("/v1/docs/d1/checkpoint", `{"message":"`+long+`"}`),
				wsE(wsJSON, checkpoint("manual", long)),
				wsE(wsMsgpack, checkpoint("manual", long)),
			},
			cliWays: []entry{cliE("doc", "save", "d1", "--from", smallBody, "--checkpoint", "-m", long)},
		},
		{
			name: "a checkpoint reason the server keeps for itself",
			code: "invalid", msg: `reason: "idle" is set by the server itself; send manual, publish or ai`,
			ways: []entry{
				httpE("/v1/docs/d1/checkpoint", `{"reason":"idle"}`),
				wsE(wsJSON, checkpoint("idle", "")),
				wsE(wsMsgpack, checkpoint("idle", "")),
			},
		},
		{
			name: "more changes than a save may carry",
			code: repo.CodeTooManyChanges, msg: "a save may carry at most 4000 changes and this one has more; split it into several saves ([limits] save_max_changes)",
			ways: []entry{
				httpE("/v1/docs/d1/draft", string(must(json.Marshal(map[string]any{"baseSeq": 1, "changes": deletes})))),
				wsE(wsJSON, save(map[string]any{"changes": deletes})),
				wsE(wsMsgpack, save(map[string]any{"changes": deletes})),
			},
		},
		{
			name: "more blocks than a document may hold",
			code: repo.CodeTooManyBlocks, msg: "a request may carry at most 20000 blocks (nested included) and this one has more ([limits] doc_max_blocks)",
			ways: []entry{
				httpE("/v1/docs/d1/draft", `{"baseSeq":1,"body":`+blocksJSON.String()+`}`),
				httpE("/v1/docs", `{"attrs":{"title":"T"},"body":`+blocksJSON.String()+`}`),
				wsE(wsJSON, save(map[string]any{"body": map[string]any{"schemaVersion": 1, "blocks": blocks}})),
				wsE(wsMsgpack, save(map[string]any{"body": map[string]any{"v": 1, "b": mpBlocks}})),
			},
			cliWays: []entry{cliE("doc", "save", "d1", "--from", bigBody), cliE("doc", "new", "--title", "T", "--from", bigBody)},
		},
		{
			name: "a lone surrogate in a change",
			code: "invalid", msg: `invalid request: $: a \u escape is half of a UTF-16 surrogate pair (a lone surrogate is not a character)`,
			ways: []entry{
				httpE("/v1/docs/d1/draft", `{"baseSeq":1,"changes":[{"op":"upsert","block":{"id":"p1","type":"paragraph","richText":[{"text":"\ud800"}]}}]}`),
				wsRaw(wsJSON, `{"type":"draft.save","id":"ID","doc":"d1","baseSeq":1,"changes":[{"op":"upsert","block":{"id":"p1","type":"paragraph","richText":[{"text":"\ud800"}]}}]}`),
			},
		},
		{
			name: "invalid UTF-8 in attributes",
			code: "invalid", msg: `invalid request: $: input is not valid UTF-8`,
			ways: []entry{
				httpE("/v1/docs/d1/draft", "{\"baseSeq\":1,\"attrs\":{\"title\":\"caf\xe9\"}}"),
				wsRaw(wsJSON, "{\"type\":\"draft.save\",\"id\":\"ID\",\"doc\":\"d1\",\"baseSeq\":1,\"attrs\":{\"title\":\"caf\xe9\"}}"),
			},
		},
		{
			name: "a field given twice in a change",
			code: "invalid", msg: `invalid request: changes[0].block.id: duplicate field`,
			ways: []entry{
				httpE("/v1/docs/d1/draft", `{"baseSeq":1,"changes":[{"op":"upsert","block":{"id":"p1","id":"p2","type":"paragraph"}}]}`),
				wsRaw(wsJSON, `{"type":"draft.save","id":"ID","doc":"d1","baseSeq":1,"changes":[{"op":"upsert","block":{"id":"p1","id":"p2","type":"paragraph"}}]}`),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.ways {
				if code, msg := w.do(); code != tt.code || msg != tt.msg {
					t.Errorf("%s:\n got %s %q\nwant %s %q", w.name, code, msg, tt.code, tt.msg)
				}
			}
			kind, ok := errs.KindFromCode(tt.code)
			if !ok {
				kind = errs.TooLarge // the too_many_* codes
			}
			for _, w := range tt.cliWays {
				want := fmt.Sprintf("exit %d", kind.ExitCode())
				if code, msg := w.do(); code != want || msg != tt.msg {
					t.Errorf("%s:\n got %s %q\nwant %s %q", w.name, code, msg, want, tt.msg)
				}
			}
		})
	}
	// Nothing of all that was stored.
	d, err := r.Draft(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if d.Seq != 1 || d.Attrs.Title != "Notes" {
		t.Errorf("after refused requests the draft is at seq %d, title %q", d.Seq, d.Attrs.Title)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
