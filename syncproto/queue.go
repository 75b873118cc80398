package syncproto

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// frame is one encoded message waiting to be written. Stream events carry
// their stream and cursor so that the writer can track what was sent.
type frame struct {
	data   []byte
	stream string
	cursor uint64
	ends   string // a reply that ends the following of this stream (see conn.sendEnding)
}

type pushResult int

const (
	pushOK     pushResult = iota
	pushFull              // no room: the caller closes the connection
	pushClosed            // the queue is closed; the frame was dropped
)

// sendQueue is a connection's bounded send queue, guarded by mu. It holds
// at most max frames, and stream events only while their bytes fit in
// maxBytes (one larger event only into an empty queue); a reply needs
// only the queued bytes to be under maxBytes. So memory stays below
// maxBytes plus one frame; nothing is ever queued beyond that.
type sendQueue struct {
	mu       sync.Mutex
	frames   []frame // FIFO; the slice is reused
	head     int     // index of the first frame in frames
	bytes    int
	max      int
	maxBytes int
	reserve  int // frames kept free for replies: stream delivery stops short of them
	hw       int // high-water mark of the length
	waiters  int // pushWait callers waiting for space

	spawn   func()        // starts a writer (conn.writeLoop) on another goroutine, without waiting
	writing bool          // a writer goroutine runs
	space   chan struct{} // closed and dropped when the writer frees room; made by a waiter (nil: none waits)
	sent    few[uint64]   // last cursor written per stream

	closed      bool
	closeCode   websocket.StatusCode
	closeReason string
	resume      bool // append the cursors written to the reason when closing
	flush       bool // write the queued frames before closing
}

func (q *sendQueue) init(max, maxBytes int, spawn func()) {
	q.max, q.maxBytes, q.spawn = max, maxBytes, spawn
	q.reserve = max / 4
}

// wakeLocked makes sure a writer runs. The writer goroutine exists only
// while there is something to write, so an idle connection has none.
func (q *sendQueue) wakeLocked() {
	if !q.writing {
		q.writing = true
		q.spawn()
	}
}

func (q *sendQueue) lenLocked() int { return len(q.frames) - q.head }

func (q *sendQueue) roomLocked(f frame, forStream bool) bool {
	n := q.lenLocked()
	limit := q.max
	if forStream {
		limit -= q.reserve
	}
	if n >= limit {
		return false
	}
	if !forStream {
		// A reply (a snapshot may be large) needs only the queue to be
		// under its byte bound: memory stays below maxBytes plus one frame.
		return q.bytes < q.maxBytes
	}
	return n == 0 || q.bytes+len(f.data) <= q.maxBytes
}

// push appends f when there is room (keeping the reserve free when
// forStream).
func (q *sendQueue) push(f frame, forStream bool) pushResult {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return pushClosed
	}
	if !q.roomLocked(f, forStream) {
		return pushFull
	}
	if q.head > 0 && len(q.frames) == cap(q.frames) {
		// Compact instead of growing: the slice never exceeds max frames.
		n := copy(q.frames, q.frames[q.head:])
		clear(q.frames[n:])
		q.frames = q.frames[:n]
		q.head = 0
	}
	q.frames = append(q.frames, f)
	q.bytes += len(f.data)
	q.hw = max(q.hw, q.lenLocked())
	q.wakeLocked()
	return pushOK
}

// pushWait is push for stream delivery: it waits for room up to lag.
// It returns pushFull when the queue stayed full that long, pushClosed
// when the queue or stop closed.
func (q *sendQueue) pushWait(f frame, lag time.Duration, stop <-chan struct{}) pushResult {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return pushClosed
		}
		if q.roomLocked(f, true) {
			q.mu.Unlock()
			return q.push(f, true)
		}
		if q.space == nil {
			q.space = make(chan struct{})
		}
		space := q.space
		q.waiters++
		q.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(lag)
		}
		var res pushResult = -1
		select {
		case <-space:
		case <-timer.C:
			res = pushFull
		case <-stop:
			res = pushClosed
		}
		q.mu.Lock()
		q.waiters--
		q.mu.Unlock()
		if res >= 0 {
			return res
		}
	}
}

// pop moves the frames to write next into dst (at most maxFrames, and
// past the first only while they stay within maxBytes) and returns it.
// When there is none it returns dst empty: with closing set (and a close
// code; 0: close without a handshake) when the writer must close the
// socket, else the writer exits as idle (and a later push starts a new
// one).
func (q *sendQueue) pop(dst []frame, maxFrames, maxBytes int) (fs []frame, closing bool, code websocket.StatusCode, reason string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.lenLocked() > 0 && (!q.closed || q.flush) {
		size := 0
		for q.lenLocked() > 0 && len(dst) < maxFrames {
			f := q.frames[q.head]
			if len(dst) > 0 && size+len(f.data) > maxBytes {
				break
			}
			size += len(f.data)
			dst = append(dst, f)
			q.frames[q.head] = frame{}
			q.head++
			q.bytes -= len(f.data)
		}
		if q.head == len(q.frames) {
			q.frames = q.frames[:0]
			q.head = 0
		}
		if q.waiters > 0 && q.space != nil {
			close(q.space)
			q.space = nil
		}
		return dst, false, 0, ""
	}
	if q.closed {
		code, reason = q.closeCode, q.closeReason
		if q.resume {
			// Computed now, after the last frame was written, so that
			// the cursors are exactly what the client can have read.
			reason = clipReason(reason + "; resume " + q.cursorsLocked())
		}
		return dst, true, code, reason
	}
	q.writing = false
	if cap(q.frames) > 16 {
		q.frames = nil // an idle connection keeps no big buffer
	}
	return dst, false, 0, ""
}

// close marks the queue closed; without flush the queued frames are
// dropped now, freeing their memory. It reports whether this call closed it.
func (q *sendQueue) close(code websocket.StatusCode, reason string, flush, resume bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.closed, q.closeCode, q.closeReason, q.flush, q.resume = true, code, reason, flush, resume
	if !flush {
		q.dropLocked()
	}
	if q.space != nil {
		close(q.space)
		q.space = nil
	}
	q.wakeLocked()
	return true
}

func (q *sendQueue) dropLocked() {
	clear(q.frames)
	q.frames, q.head, q.bytes = nil, 0, 0
}

// drain drops whatever is left after the writer stopped.
func (q *sendQueue) drain() {
	q.mu.Lock()
	q.closed = true
	q.dropLocked()
	q.mu.Unlock()
}

// wrote records the last cursor written of a stream.
func (q *sendQueue) wrote(stream string, cursor uint64) {
	q.mu.Lock()
	q.sent.set(stream, cursor)
	q.mu.Unlock()
}

// forget drops a stream the client stopped following (unsubscribe,
// leave): a resumable close lists the streams followed, and a connection
// that follows one stream after another keeps no record of each.
func (q *sendQueue) forget(stream string) {
	q.mu.Lock()
	q.sent.del(stream)
	q.mu.Unlock()
}

// cursorsLocked formats the last cursor written per stream: "doc:a@12 run:b@3".
func (q *sendQueue) cursorsLocked() string {
	if q.sent.len() == 0 {
		return "from your cursors"
	}
	sent := slices.Clone(q.sent.items)
	slices.SortFunc(sent, func(a, b fewItem[uint64]) int { return strings.Compare(a.key, b.key) })
	parts := make([]string, len(sent))
	for i, it := range sent {
		parts[i] = it.key + "@" + strconv.FormatUint(it.val, 10)
	}
	return strings.Join(parts, " ")
}

func (q *sendQueue) stats() (n, hw int, closing string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		closing = strconv.Itoa(int(q.closeCode)) + " " + q.closeReason
	}
	return q.lenLocked(), q.hw, closing
}

func (q *sendQueue) isClosed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}
