package syncproto

// few is a small map kept as a slice, for what a connection holds by
// name: the documents it opened, the streams it follows (at most
// MaxSubscriptions of them, most often one or two) and the last cursor
// written of each. A Go map costs some
// 250 bytes even with one entry, a slice of one 24 to 32; a lookup scans
// a few entries. The zero value is empty.
type few[V any] struct{ items []fewItem[V] }

type fewItem[V any] struct {
	key string
	val V
}

// get returns the value of key, or the zero value.
func (f *few[V]) get(key string) V {
	v, _ := f.lookup(key)
	return v
}

func (f *few[V]) lookup(key string) (V, bool) {
	for i := range f.items {
		if f.items[i].key == key {
			return f.items[i].val, true
		}
	}
	var zero V
	return zero, false
}

func (f *few[V]) has(key string) bool {
	_, ok := f.lookup(key)
	return ok
}

// set adds or replaces key's value.
func (f *few[V]) set(key string, v V) {
	for i := range f.items {
		if f.items[i].key == key {
			f.items[i].val = v
			return
		}
	}
	f.items = append(f.items, fewItem[V]{key, v})
}

// del removes key.
func (f *few[V]) del(key string) {
	for i := range f.items {
		if f.items[i].key == key {
			n := len(f.items) - 1
			copy(f.items[i:], f.items[i+1:])
			f.items[n] = fewItem[V]{} // keep no reference in the spare capacity
			f.items = f.items[:n]
			if n == 0 {
				f.items = nil
			}
			return
		}
	}
}

func (f *few[V]) len() int { return len(f.items) }
