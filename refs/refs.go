package refs

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"sync"
	"time"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
)

var (
	// ErrConflict is returned by Update when a ref's current value is not the expected one.
	ErrConflict error = errs.E(errs.Conflict, "refs: conflict")
	// ErrNotFound is returned by Get when a ref does not exist.
	ErrNotFound = errors.New("refs: not found")
)

// Update moves one ref from Old to New. A zero Old means "must not exist";
// a zero New deletes the ref.
type Update struct {
	Name string
	Old  objstore.ID
	New  objstore.ID
	// Logged elsewhere: the caller records this move in the same batch
	// in a log of its own (a document's version log records every head
	// move a new version makes), so no reflog entry is written for it.
	// A later entry of the ref then carries its old value explicitly.
	LoggedElsewhere bool
}

// Entry is one reflog entry. In storage Old is left out when it equals
// the previous entry's New (it nearly always does: a ref moves on from
// where it was), and Reflog fills it back in.
type Entry struct {
	Seq     uint64      `msgpack:"-"`
	Old     objstore.ID `msgpack:"old,omitempty"`
	New     objstore.ID `msgpack:"new"`
	Time    int64       `msgpack:"time"` // Unix milliseconds
	Message string      `msgpack:"msg,omitempty"`
}

// Store reads and moves refs. It is safe for concurrent use.
type Store struct {
	db    *kv.DB
	locks [64]sync.Mutex // striped by ref name; held from CAS check to commit
	now   func() time.Time
}

// New returns a Store on db.
func New(db *kv.DB) *Store { return &Store{db: db, now: time.Now} }

// Key returns the Pebble key of ref name.
func Key(name string) []byte { return append([]byte(kv.PrefixRef), name...) }

func reflogPrefix(name string) []byte {
	k := append([]byte(kv.PrefixReflog), name...)
	return append(k, 0)
}

// Get returns the value of ref name, or ErrNotFound.
func (s *Store) Get(name string) (objstore.ID, error) {
	v, err := kv.Get(s.db, Key(name))
	if errors.Is(err, kv.ErrNotFound) {
		return objstore.ID{}, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if err != nil {
		return objstore.ID{}, err
	}
	var id objstore.ID
	if len(v) != len(id) {
		return id, fmt.Errorf("refs: %s holds %d bytes, want %d", name, len(v), len(id))
	}
	copy(id[:], v)
	return id, nil
}

// Update checks every update's Old value, then adds the ref moves and their
// reflog entries to b and commits b with Sync. On ErrConflict nothing is
// committed. The caller must not use b afterwards; Update closes it.
func (s *Store) Update(b *kv.Batch, ups []Update, msg string) error {
	defer b.Close()
	names := make(map[string]bool, len(ups))
	for _, u := range ups {
		if u.Name == "" {
			return errors.New("refs: update of a ref with an empty name")
		}
		if names[u.Name] {
			return fmt.Errorf("refs: ref %s appears twice in one update; combine the moves", u.Name)
		}
		names[u.Name] = true
	}
	unlock := s.lock(ups)
	defer unlock()
	now := s.now().UnixMilli()
	for _, u := range ups {
		cur, err := s.Get(u.Name)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		if cur != u.Old {
			return fmt.Errorf("%w: %s is %s, expected %s", ErrConflict, u.Name, cur.Short(), u.Old.Short())
		}
		if u.New.IsZero() {
			if err := b.Delete(Key(u.Name)); err != nil {
				return err
			}
		} else if err := b.Set(Key(u.Name), u.New[:]); err != nil {
			return err
		}
		if u.LoggedElsewhere {
			continue
		}
		seq, prevNew, err := s.lastReflog(u.Name)
		if err != nil {
			return err
		}
		ent := Entry{Old: u.Old, New: u.New, Time: now, Message: msg}
		if ent.Old == prevNew {
			ent.Old = objstore.ID{}
		}
		e, err := kv.Marshal(ent)
		if err != nil {
			return err
		}
		if err := b.Set(kv.Uint64(reflogPrefix(u.Name), seq+1), e); err != nil {
			return err
		}
	}
	return s.db.Apply(b, kv.Sync)
}

// lock takes the stripes of every ref in ups in a fixed order.
func (s *Store) lock(ups []Update) func() {
	idx := make([]int, 0, len(ups))
	seen := map[int]bool{}
	for _, u := range ups {
		h := fnv.New32a()
		h.Write([]byte(u.Name))
		i := int(h.Sum32() % uint32(len(s.locks)))
		if !seen[i] {
			seen[i] = true
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	for _, i := range idx {
		s.locks[i].Lock()
	}
	return func() {
		for j := len(idx) - 1; j >= 0; j-- {
			s.locks[idx[j]].Unlock()
		}
	}
}

// lastReflog returns the sequence number and New value of ref name's last
// reflog entry (0 and zero when it has none).
func (s *Store) lastReflog(name string) (uint64, objstore.ID, error) {
	p := reflogPrefix(name)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return 0, objstore.ID{}, err
	}
	defer it.Close()
	if !it.Last() {
		return 0, objstore.ID{}, it.Error()
	}
	var e Entry
	if err := kv.Unmarshal(it.Value(), &e); err != nil {
		return 0, objstore.ID{}, fmt.Errorf("refs: reflog %s: %w", name, err)
	}
	return kv.ParseUint64(it.Key()), e.New, nil
}

// Reflog returns ref name's entries, oldest first.
func (s *Store) Reflog(name string) ([]Entry, error) {
	p := reflogPrefix(name)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []Entry
	var prevNew objstore.ID
	for it.First(); it.Valid(); it.Next() {
		var e Entry
		if err := kv.Unmarshal(it.Value(), &e); err != nil {
			return nil, fmt.Errorf("refs: reflog %s: %w", name, err)
		}
		e.Seq = kv.ParseUint64(it.Key())
		if e.Old.IsZero() {
			e.Old = prevNew
		}
		prevNew = e.New
		out = append(out, e)
	}
	return out, it.Error()
}

// List returns every ref whose name starts with prefix, in name order.
func (s *Store) List(prefix string) (map[string]objstore.ID, []string, error) {
	p := Key(prefix)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	vals := map[string]objstore.ID{}
	var names []string
	for it.First(); it.Valid(); it.Next() {
		name := string(it.Key()[len(kv.PrefixRef):])
		var id objstore.ID
		if len(it.Value()) != len(id) {
			return nil, nil, fmt.Errorf("refs: %s holds %d bytes, want %d", name, len(it.Value()), len(id))
		}
		copy(id[:], it.Value())
		vals[name] = id
		names = append(names, name)
	}
	return vals, names, it.Error()
}

// Names returns the names of every ref that has a reflog, deleted refs
// included, in name order.
func (s *Store) Names() ([]string, error) {
	p := []byte(kv.PrefixReflog)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []string
	for ok := it.First(); ok; {
		k := it.Key()[len(p):]
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			ok = it.Next()
			continue
		}
		name := string(k[:i])
		out = append(out, name)
		// Skip the rest of this ref's entries.
		ok = it.SeekGE(kv.PrefixEnd(reflogPrefix(name)))
	}
	return out, it.Error()
}
