package syncproto

import (
	"fmt"
	"testing"
)

// TestFew: few behaves as a map of its keys, whatever the order of sets
// and deletes.
func TestFew(t *testing.T) {
	var f few[int]
	ref := map[string]int{}
	for i := range 500 {
		k := fmt.Sprint(i * 7 % 13)
		switch i % 3 {
		case 0, 1:
			f.set(k, i)
			ref[k] = i
		case 2:
			f.del(k)
			delete(ref, k)
		}
		if f.len() != len(ref) {
			t.Fatalf("step %d: %d entries, want %d", i, f.len(), len(ref))
		}
		for k, v := range ref {
			if got, ok := f.lookup(k); !ok || got != v || f.get(k) != v || !f.has(k) {
				t.Fatalf("step %d: %s = %d, %v; want %d", i, k, got, ok, v)
			}
		}
		if f.has("absent") || f.get("absent") != 0 {
			t.Fatal("an absent key was found")
		}
	}
}
