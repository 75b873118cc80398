package objstore

import (
	"container/list"
	"sync"
)

// versionCache keeps the canonical bytes of recently read or written
// versions, so that rebuilding a version from its delta chain usually takes
// one delta. Entries are keyed by id and always hold bytes that hash to it
// (they are checked before they go in), so the cache never needs
// invalidating: an id's content cannot change.
type versionCache struct {
	mu     sync.Mutex // guards everything below
	max    int        // byte budget
	size   int
	order  *list.List // front = most recently used; values are *cacheEntry
	byID   map[ID]*list.Element
	prefix map[[refLen]byte]ID // reference prefix -> a cached id with it
}

type cacheEntry struct {
	id   ID
	data []byte
}

func newVersionCache(maxBytes int) *versionCache {
	return &versionCache{max: maxBytes, order: list.New(), byID: map[ID]*list.Element{}, prefix: map[[refLen]byte]ID{}}
}

// get returns the cached bytes of id; the caller must not modify them.
func (c *versionCache) get(id ID) ([]byte, bool) {
	if c.max <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[id]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cacheEntry).data, true
}

// add caches data as the canonical bytes of id; data must not be modified
// afterwards.
func (c *versionCache) add(id ID, data []byte) {
	if c.max <= 0 || len(data) > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[id]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.byID[id] = c.order.PushFront(&cacheEntry{id: id, data: data})
	c.prefix[refOf(id)] = id
	c.size += len(data)
	for c.size > c.max {
		e := c.order.Back()
		ce := e.Value.(*cacheEntry)
		c.order.Remove(e)
		delete(c.byID, ce.id)
		if p := refOf(ce.id); c.prefix[p] == ce.id {
			delete(c.prefix, p)
		}
		c.size -= len(ce.data)
	}
}

// byPrefix returns a cached id that starts with reference prefix p.
func (c *versionCache) byPrefix(p [refLen]byte) (ID, bool) {
	if c.max <= 0 {
		return ID{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.prefix[p]
	return id, ok
}

// decodedCache keeps a few decoded versions (a checkpoint's transaction is
// stored against the version just written and its parent, the previous
// checkpoint's version). Entries are shared and must not be modified.
type decodedCache struct {
	mu    sync.Mutex // guards order and byID
	order []ID       // oldest first
	byID  map[ID]*Version
}

const decodedMax = 8

func (c *decodedCache) get(id ID) (*Version, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.byID[id]
	return v, ok
}

func (c *decodedCache) add(id ID, v *Version) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[ID]*Version{}
	}
	if _, ok := c.byID[id]; ok {
		return
	}
	if len(c.order) >= decodedMax {
		delete(c.byID, c.order[0])
		c.order = c.order[1:]
	}
	c.order = append(c.order, id)
	c.byID[id] = v
}
