package syncproto

import (
	"fmt"
	"testing"
	"time"
)

// Remembered acks are bounded by age and by bytes, oldest first; a
// retry during the first attempt gets that attempt's result.
func TestSaveKeysBounds(t *testing.T) {
	t0 := time.Unix(1767225600, 0)
	k := newSaveKeys(time.Minute, 10*200)
	sum := [32]byte{1}
	for i := range 20 {
		e, owner, err := k.begin(fmt.Sprint("d\x00u\x00k", i), sum, t0)
		if err != nil || !owner {
			t.Fatalf("begin %d: owner %v err %v", i, owner, err)
		}
		k.finish(e, &Ack{Doc: "d", Seq: uint64(i + 1)}, t0)
	}
	if n := k.len(); n == 0 || n >= 20 || k.bytes > k.maxBytes {
		t.Fatalf("%d remembered in %d bytes, bound %d", n, k.bytes, k.maxBytes)
	}
	// The newest is remembered, the oldest forgotten.
	if e, owner, _ := k.begin("d\x00u\x00k19", sum, t0); owner || e.ack == nil || e.ack.Seq != 20 {
		t.Fatalf("newest key forgotten")
	}
	if _, owner, _ := k.begin("d\x00u\x00k0", sum, t0); !owner {
		t.Fatalf("oldest key still remembered past the byte bound")
	}
	// Past the TTL everything acknowledged is forgotten.
	if _, owner, _ := k.begin("d\x00u\x00k19", sum, t0.Add(time.Minute)); !owner {
		t.Fatalf("key remembered past its TTL")
	}
	// A second begin during an attempt waits for it; a failed attempt
	// frees the key.
	e, owner, _ := k.begin("x", sum, t0)
	w, owner2, _ := k.begin("x", sum, t0)
	if !owner || owner2 || w != e {
		t.Fatalf("concurrent begin: owner %v %v", owner, owner2)
	}
	k.finish(e, nil, t0)
	<-w.done
	if w.ack != nil {
		t.Fatalf("failed attempt has an ack")
	}
	if _, owner, _ := k.begin("x", sum, t0); !owner {
		t.Fatalf("key of a failed attempt not freed")
	}
	if _, _, err := k.begin("x", [32]byte{2}, t0); err == nil {
		t.Fatalf("same key, other save: no error")
	}
}
