package kv

import (
	"hash/fnv"
	"slices"
	"sync"
)

// lockTable holds the named locks of Batch.Lock for a store in one
// process: names hash onto stripes, taken in stripe order so that two
// batches locking overlapping sets cannot deadlock.
type lockTable struct {
	stripes [256]sync.Mutex
}

// lock takes the stripes of names and returns the func that releases
// them (exactly once).
func (t *lockTable) lock(names []string) func() {
	idx := make([]int, 0, len(names))
	for _, n := range names {
		h := fnv.New32a()
		h.Write([]byte(n))
		idx = append(idx, int(h.Sum32()%uint32(len(t.stripes))))
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for _, i := range idx {
		t.stripes[i].Lock()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			for j := len(idx) - 1; j >= 0; j-- {
				t.stripes[idx[j]].Unlock()
			}
		})
	}
}
