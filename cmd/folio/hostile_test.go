package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/objstore/pack"
	"github.com/foliodev/folio/syncproto"
)

// hostileFrame is the 14-byte frame that killed the daemon before decoding
// was bounded: a map whose "x" claims an array of 2^32-1 elements.
var hostileFrame = []byte{0x82, 0xa1, 0x78, 0xdd, 0xff, 0xff, 0xff, 0xff, 0xa4, 0x74, 0x79, 0x70, 0x65, 0x05}

// TestHostileFramesDaemon sends the frame, unauthenticated, to a real
// `folio serve` process, with a JSON frame built to amplify and a frame
// nested 10,000 deep: each connection gets a bad_message error, and the
// daemon keeps serving (health, the CLI over HTTP, a clean SIGTERM exit).
func TestHostileFramesDaemon(t *testing.T) {
	isolateEnv(t)
	d := startDaemon(t, filepath.Join(t.TempDir(), "data"), "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(d.url, "http") + "/v1/sync"
	frames := []struct {
		proto string
		typ   websocket.MessageType
		data  []byte
	}{
		{syncproto.SubprotocolMsgpack, websocket.MessageBinary, hostileFrame},
		{syncproto.SubprotocolMsgpack, websocket.MessageBinary, append(bytes.Repeat([]byte{0x91}, 10000), 0xc0)},
		{syncproto.SubprotocolJSON, websocket.MessageText, append(append([]byte(`{"type":"hello","id":"h","token":[`),
			bytes.Repeat([]byte("{},"), 100000)...), "{}]}"...)},
	}
	for _, f := range frames {
		ws, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{f.proto}})
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.Write(ctx, f.typ, f.data); err != nil {
			t.Fatal(err)
		}
		_, reply, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("%s: no reply to a hostile frame: %v\n%s", f.proto, err, d.stderr)
		}
		m, err := syncproto.CodecFor(f.proto).Decode(reply, true)
		if em, ok := m.(*syncproto.Error); err != nil || !ok || em.Code != syncproto.CodeBadMessage {
			t.Fatalf("%s: reply %q (%v), want a bad_message error", f.proto, reply, err)
		}
		ws.CloseNow()
	}
	select {
	case <-d.done:
		t.Fatalf("the daemon died: %v\n%s", d.err, d.stderr)
	default:
	}
	resp, err := http.Get(d.url + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz after the frames: %v %v", resp, err)
	}
	resp.Body.Close()
	cli := []string{"--server", d.url, "--token", d.token}
	if r := runCLI(append(cli, "doc", "new", "--id", "after", "--title", "After")...); r.code != 0 {
		t.Fatalf("doc new after the frames: %+v", r)
	}
	if r := runCLI(append(cli, "log", "after")...); r.code != 0 || !strings.Contains(r.stdout, "v1.r0") {
		t.Fatalf("log after the frames: %+v", r)
	}
	d.stop(t)
}

// TestPackImportCraftedEntry: `folio pack verify` and `folio pack import`
// of a pack whose entries all hash to their ids but one of which is a
// crafted 13-byte version claiming 2^32-1 blocks fail with an error that
// names the entry, and the import moves nothing.
func TestPackImportCraftedEntry(t *testing.T) {
	t.Setenv("FOLIO_USER", "author-a")
	tmp := t.TempDir()
	src, dst := filepath.Join(tmp, "src"), filepath.Join(tmp, "dst")
	history(t, src, tmp, 2, 2)
	full := filepath.Join(tmp, "full.fpack")
	mustFolio(t, "--data", src, "pack", "export", "-o", full)

	good, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	r, err := pack.NewReader(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := pack.NewWriter(&buf, r.Header())
	if err != nil {
		t.Fatal(err)
	}
	crafted := []byte{0x81, 0xa6, 'b', 'l', 'o', 'c', 'k', 's', 0xdd, 0xff, 0xff, 0xff, 0xff}
	id := objstore.Sum(objstore.KindVersion, crafted)
	for n := 1; ; n++ {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 3 {
			if err := w.Add(id, objstore.KindVersion, crafted); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Add(e.ID, e.Kind, e.Data); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(tmp, "crafted.fpack")
	if err := os.WriteFile(bad, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{{"pack", "verify", bad}, {"--data", dst, "pack", "import", bad}} {
		if args[0] == "--data" {
			mustFolio(t, "--data", dst, "init")
		}
		_, errs, code := folio(t, args...)
		if code != exitInvalid || !strings.Contains(errs, "(entry 3)") || !strings.Contains(errs, id.Short()) ||
			!strings.Contains(errs, "does not decode") {
			t.Fatalf("folio %s: exit %d, want %d and an error naming entry 3 (%s):\n%s", strings.Join(args, " "), code, exitInvalid, id.Short(), errs)
		}
		t.Logf("folio %s: exit %d: %s", args[len(args)-2], code, errs)
	}
	if out := mustFolio(t, "--data", dst, "pack", "heads"); strings.TrimSpace(out) != "" {
		t.Fatalf("the refused import moved heads:\n%s", out)
	}
	mustFolio(t, "--data", dst, "fsck") // exit 0: nothing half-written
}
