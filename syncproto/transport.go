package syncproto

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// The connection under the WebSocket.
//
// coder/websocket reads and writes a server connection through the
// *bufio.ReadWriter that the http.Hijacker returns: net/http's, with 4 KiB
// for each direction, held for as long as the connection lives, and a
// writer that the library flushes after every message, one write system
// call per frame. ServeHTTP hands Accept a ResponseWriter whose Hijack
// returns buffers of our own instead (hijacker):
//
//   - A small read buffer (readBuffer bytes). A frame larger than what is
//     buffered is read straight into the message, so a small buffer costs
//     at most one more read per frame, and clients send few frames.
//   - A small write buffer over a batchConn. Outside a batch it writes
//     through to the socket, as net/http's would. The connection's writer
//     (conn.writeLoop) opens a batch, lets the library frame every message
//     waiting in the send queue into it, and writes them to the socket
//     with one system call under one deadline (flush). Frames of other
//     goroutines (the library's pongs, a keepalive ping) that arrive
//     during a batch join it, after the frames before them, as the
//     library orders frames; nothing else writes to the socket. Every
//     write to the socket has a deadline (WriteTimeout).
//
// So an idle connection holds about readBuffer + writeBuffer bytes of
// buffers, and a connection that has several frames to send (a burst of
// events, a reply behind them) sends them in one segment.

const (
	readBuffer  = 512
	writeBuffer = 64
	// maxBatch bounds the bytes one batch collects before it writes
	// them: the batch buffer is pooled, so this bounds the memory of
	// connections that write at once, not of idle ones.
	maxBatch = 64 << 10
)

// hijacker is the ResponseWriter passed to websocket.Accept.
type hijacker struct {
	http.ResponseWriter
	timeout time.Duration // bounds each write to the socket (Config.WriteTimeout)
	conn    *batchConn    // set by Hijack
}

// Unwrap gives http.ResponseController the writer underneath.
func (h *hijacker) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// Hijack takes the connection over from net/http and returns it with
// buffers of our own. Bytes net/http had already read past the request
// (a client may send its first frame right after the handshake) are read
// first.
func (h *hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("syncproto: the response writer cannot hand over its connection (no http.Hijacker)")
	}
	nc, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	// net/http flushed the handshake's answer before handing over, so its
	// writer is empty; its reader may hold what the client sent since.
	// Those bytes go into the new reader's buffer (Accept keeps what is
	// buffered and reads the socket after it).
	br := bufio.NewReaderSize(nc, readBuffer)
	if n := brw.Reader.Buffered(); n > 0 {
		early, _ := brw.Reader.Peek(n)
		br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(early)), nc), max(readBuffer, n))
		if _, err := br.Peek(n); err != nil {
			nc.Close()
			return nil, nil, err
		}
	}
	h.conn = &batchConn{Conn: nc, timeout: h.timeout}
	return nc, bufio.NewReadWriter(br, bufio.NewWriterSize(h.conn, writeBuffer)), nil
}

// batchConn is the writer under the library's write buffer. Every write
// to the socket has a deadline: a batch's own, and WriteTimeout from now
// for a write outside a batch (the library's control frames, which also
// bound themselves). The deadline is set before each write and never
// cleared: one call per write.
type batchConn struct {
	net.Conn
	timeout time.Duration // for writes outside a batch

	mu       sync.Mutex
	batching bool
	buf      *[]byte // the batch's bytes (pooled); nil outside a batch
	err      error   // the first failed write; every later one fails too
	deadline time.Time
}

var batchPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// Write collects p into the batch, or writes it through outside one.
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	if !b.batching {
		return b.writeLocked(p, time.Now().Add(b.timeout))
	}
	*b.buf = append(*b.buf, p...)
	if len(*b.buf) >= maxBatch {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// begin opens a batch whose write must end by deadline.
func (b *batchConn) begin(deadline time.Time) {
	b.mu.Lock()
	b.batching, b.deadline = true, deadline
	if b.buf == nil {
		b.buf = batchPool.Get().(*[]byte)
	}
	b.mu.Unlock()
}

// flush writes what the batch collected and closes it.
func (b *batchConn) flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.flushLocked()
	b.batching = false
	if b.buf != nil {
		if cap(*b.buf) <= maxBatch {
			*b.buf = (*b.buf)[:0]
			batchPool.Put(b.buf)
		}
		b.buf = nil
	}
	return err
}

func (b *batchConn) flushLocked() error {
	if b.err != nil {
		return b.err
	}
	if len(*b.buf) == 0 {
		return nil
	}
	_, err := b.writeLocked(*b.buf, b.deadline)
	*b.buf = (*b.buf)[:0]
	return err
}

// writeLocked writes p to the socket by deadline.
func (b *batchConn) writeLocked(p []byte, deadline time.Time) (int, error) {
	if err := b.Conn.SetWriteDeadline(deadline); err != nil {
		b.err = err
		return 0, err
	}
	n, err := b.Conn.Write(p)
	if err != nil {
		b.err = err
	}
	return n, err
}
