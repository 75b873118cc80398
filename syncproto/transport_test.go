package syncproto

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// countingListener counts the writes to the sockets it accepts.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &l.writes}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(p)
}

// TestBatchOneWrite: frames written in one batch reach the socket in one
// write and the peer reads each of them, in order; a frame outside a
// batch is written through at once.
func TestBatchOneWrite(t *testing.T) {
	type result struct{ batch, single int64 }
	got := make(chan result, 1)
	var ln *countingListener
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hj := &hijacker{ResponseWriter: w, timeout: 5 * time.Second}
		ws, err := websocket.Accept(hj, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer ws.CloseNow()
		before := ln.writes.Load()
		hj.conn.begin(time.Now().Add(5 * time.Second))
		for i := range 20 {
			// Sizes around the write buffer's and past it.
			msg := bytes.Repeat([]byte{byte('a' + i)}, 10+i*40)
			if err := ws.Write(context.Background(), websocket.MessageBinary, msg); err != nil {
				t.Error(err)
				return
			}
		}
		if n := ln.writes.Load() - before; n != 0 {
			t.Errorf("%d socket writes before the batch was flushed", n)
		}
		if err := hj.conn.flush(); err != nil {
			t.Error(err)
			return
		}
		batch := ln.writes.Load() - before
		if err := ws.Write(context.Background(), websocket.MessageText, []byte("alone")); err != nil {
			t.Error(err)
			return
		}
		got <- result{batch, ln.writes.Load() - before - batch}
		ws.Read(context.Background()) // until the client closes
	}))
	ln = &countingListener{Listener: srv.Listener}
	srv.Listener = ln
	srv.Start()
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	for i := range 20 {
		typ, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := bytes.Repeat([]byte{byte('a' + i)}, 10+i*40); typ != websocket.MessageBinary || !bytes.Equal(data, want) {
			t.Fatalf("message %d: %d bytes of %q, want %d of %q", i, len(data), data[:1], len(want), want[:1])
		}
	}
	if _, data, err := c.Read(ctx); err != nil || string(data) != "alone" {
		t.Fatalf("last message %q, %v", data, err)
	}
	r := <-got
	if r.batch != 1 || r.single != 1 {
		t.Fatalf("socket writes: %d for the batch of 20 frames (want 1), %d for the frame alone (want 1)", r.batch, r.single)
	}
	c.Close(websocket.StatusNormalClosure, "")
}

// TestHijackKeepsEarlyBytes: a frame the client sends in the same segment
// as its upgrade request (so net/http has read it already) is the first
// thing the server reads.
func TestHijackKeepsEarlyBytes(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(&hijacker{ResponseWriter: w, timeout: 5 * time.Second}, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer ws.CloseNow()
		var msgs []string
		for range 2 {
			_, data, err := ws.Read(context.Background())
			if err != nil {
				t.Error(err)
				break
			}
			msgs = append(msgs, string(data))
		}
		got <- fmt.Sprint(msgs)
	}))
	defer srv.Close()

	nc, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	key := make([]byte, 16)
	rand.Read(key)
	var req bytes.Buffer
	fmt.Fprintf(&req, "GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", srv.Listener.Addr(), base64.StdEncoding.EncodeToString(key))
	// Two masked client frames right behind the request, the second
	// longer than the server's read buffer.
	for _, msg := range []string{"early", string(bytes.Repeat([]byte("x"), 3*readBuffer))} {
		req.WriteByte(0x82) // FIN, binary
		switch n := len(msg); {
		case n < 126:
			req.WriteByte(0x80 | byte(n))
		default:
			req.Write([]byte{0x80 | 126, byte(n >> 8), byte(n)})
		}
		mask := []byte{1, 2, 3, 4}
		req.Write(mask)
		for i := range len(msg) {
			req.WriteByte(msg[i] ^ mask[i%4])
		}
	}
	if _, err := nc.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	select {
	case msgs := <-got:
		if want := fmt.Sprint([]string{"early", string(bytes.Repeat([]byte("x"), 3*readBuffer))}); msgs != want {
			t.Fatalf("server read %.60q…, want %.60q…", msgs, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not read the early frames")
	}
}

// TestBatchWriteDeadline: a peer that stops reading cannot hold a writer
// past the write timeout; the failed write fails every later one.
func TestBatchWriteDeadline(t *testing.T) {
	got := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hj := &hijacker{ResponseWriter: w, timeout: 200 * time.Millisecond}
		ws, err := websocket.Accept(hj, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer ws.CloseNow()
		msg := bytes.Repeat([]byte("x"), 1<<20)
		for range 256 { // far more than any socket buffers
			hj.conn.begin(time.Now().Add(200 * time.Millisecond))
			err = ws.Write(context.Background(), websocket.MessageBinary, msg)
			if ferr := hj.conn.flush(); err == nil {
				err = ferr
			}
			if err != nil {
				break
			}
		}
		if err == nil {
			got <- nil
			return
		}
		_, again := hj.conn.Write([]byte("more"))
		got <- errors.Join(err, again)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow() // and never read
	select {
	case err := <-got:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("writes to a peer that does not read ended with %v, want the deadline", err)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("a write to a peer that does not read outlived its deadline")
	}
}
