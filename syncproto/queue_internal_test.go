package syncproto

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestSendQueueBounds: the queue never holds more than its frame and byte
// bounds, keeps a reserve for replies, and frees everything when closed
// without flushing.
func TestSendQueueBounds(t *testing.T) {
	var q sendQueue
	var writers atomic.Int32
	q.init(8, 1000, func() { go writers.Add(1) })
	f := func(n int) frame { return frame{data: make([]byte, n)} }

	// Stream events stop at max - reserve (8 - 2).
	for i := 0; i < 6; i++ {
		if r := q.push(f(10), true); r != pushOK {
			t.Fatalf("event %d: %v", i, r)
		}
	}
	if r := q.push(f(10), true); r != pushFull {
		t.Fatalf("event beyond max-reserve: %v", r)
	}
	if r := q.pushWait(f(10), 20*time.Millisecond, nil); r != pushFull {
		t.Fatalf("pushWait on a full queue: %v", r)
	}
	// Replies may use the reserve, then the queue is full.
	for i, want := range []pushResult{pushOK, pushOK, pushFull} {
		if r := q.push(f(10), false); r != want {
			t.Fatalf("reply %d with the reserve: %v, want %v", i, r, want)
		}
	}
	n, hw, _ := q.stats()
	if n != 8 || hw != 8 {
		t.Fatalf("len %d high-water %d", n, hw)
	}
	time.Sleep(10 * time.Millisecond) // let the spawned writer stubs run
	if n := writers.Load(); n != 1 {
		t.Fatalf("%d writers started for one busy stretch", n)
	}

	// Byte bound: events only while they fit; one big event into an empty queue.
	var b sendQueue
	b.init(100, 1000, func() {})
	if b.push(f(600), true) != pushOK || b.push(f(600), true) != pushFull {
		t.Fatal("byte bound for events")
	}
	if b.push(f(5000), false) != pushOK { // a big reply: bytes were under the bound
		t.Fatal("a large reply was refused")
	}
	if b.push(f(1), false) != pushFull {
		t.Fatal("a reply over the byte bound was queued")
	}
	var e sendQueue
	e.init(100, 1000, func() {})
	if e.push(f(5000), true) != pushOK {
		t.Fatal("a large event into an empty queue was refused")
	}

	// Closing without flush drops everything; pop reports the close.
	if !q.close(CloseSlowConsumer, "slow consumer", false, true) {
		t.Fatal("close")
	}
	q.wrote("doc:a", 7)
	if n, _, closing := q.stats(); n != 0 || closing == "" {
		t.Fatalf("after close: len %d closing %q", n, closing)
	}
	fs, closing, code, reason := q.pop(nil, 16, 1<<20)
	if len(fs) != 0 || !closing || code != CloseSlowConsumer || reason != "slow consumer; resume doc:a@7" {
		t.Fatalf("pop after close: %d frames, %v %d %q", len(fs), closing, code, reason)
	}
	if q.push(f(1), false) != pushClosed {
		t.Fatal("push after close")
	}
}

func TestClipReason(t *testing.T) {
	long := "slow consumer; resume"
	for i := 0; i < 20; i++ {
		long += " doc:abcdefgh@123456"
	}
	got := clipReason(long)
	if len(got) > 123 || got[len(got)-1] == ' ' {
		t.Fatalf("clipped to %d bytes: %q", len(got), got)
	}
}
