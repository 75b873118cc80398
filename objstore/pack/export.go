package pack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

// Stores are the parts of a data directory that packs read and write. A
// running daemon passes its own objstore and refs stores so that ref
// compare-and-swap shares their locks.
type Stores struct {
	DB      *kv.DB
	Objects *objstore.Store
	Refs    *refs.Store
}

// NewStores returns Stores over db with fresh object and ref stores; use it
// only when nothing else in the process writes refs on db.
func NewStores(db *kv.DB) Stores {
	return Stores{DB: db, Objects: objstore.New(db), Refs: refs.New(db)}
}

// DocPrefix and HeadSuffix frame a document's head ref: "docs/<id>/head";
// PublishedSuffix its published ref, "docs/<id>/published" (the version
// the public sees, an ancestor of the head or the head).
const (
	DocPrefix       = "docs/"
	HeadSuffix      = "/head"
	PublishedSuffix = "/published"
)

// HeadRef returns the name of document doc's head ref.
func HeadRef(doc string) string { return DocPrefix + doc + HeadSuffix }

// DocOfRef returns the document id of a head ref name, or false when name
// is not of the form "docs/<id>/head".
func DocOfRef(name string) (string, bool) {
	if !strings.HasPrefix(name, DocPrefix) || !strings.HasSuffix(name, HeadSuffix) {
		return "", false
	}
	doc := name[len(DocPrefix) : len(name)-len(HeadSuffix)]
	if doc == "" || strings.ContainsAny(doc, "/\x00\n") {
		return "", false
	}
	return doc, true
}

// DocOfPublishedRef returns the document id of a published ref name, or
// false when name is not of the form "docs/<id>/published".
func DocOfPublishedRef(name string) (string, bool) {
	if !strings.HasSuffix(name, PublishedSuffix) {
		return "", false
	}
	return DocOfRef(strings.TrimSuffix(name, PublishedSuffix) + HeadSuffix)
}

// ExportOptions choose what Export writes.
type ExportOptions struct {
	// Docs limits the export to these documents' heads; empty means every
	// document ("docs/<id>/head" refs).
	Docs []string
	// Haves are version ids the receiver already holds, with everything
	// they reach; those objects are left out. Unknown ids are ignored and
	// counted in ExportStats.UnknownHaves.
	Haves []objstore.ID
}

// ExportStats describe a written pack.
type ExportStats struct {
	Objects      uint64 // entries written
	RawBytes     uint64 // their canonical (uncompressed) size
	PackBytes    int64  // bytes of the pack
	Refs         []Ref  // refs the pack carries
	UnknownHaves int    // haves this store does not have
}

// Export writes to w a pack holding every object reachable from the chosen
// heads that is not reachable from o.Haves, in dependency order, and the
// heads themselves as its refs. Refs are read once at the start; objects
// are immutable, so the pack is consistent even while writers move refs.
func Export(ctx context.Context, s Stores, w io.Writer, o ExportOptions) (ExportStats, error) {
	var st ExportStats
	heads, err := chooseHeads(s, o.Docs)
	if err != nil {
		return st, err
	}
	wk := &walker{objs: s.Objects, seen: make(map[objstore.ID]struct{})}
	for _, h := range o.Haves {
		known, err := wk.markHave(ctx, h)
		if err != nil {
			return st, err
		}
		if !known {
			st.UnknownHaves++
		}
	}
	pw, err := NewWriter(w, Header{Count: Streamed, Refs: heads})
	if err != nil {
		return st, err
	}
	for _, h := range heads {
		if err := wk.emit(ctx, h.ID, pw); err != nil {
			pw.Abort()
			return st, fmt.Errorf("export %s: %w", h.Name, err)
		}
	}
	if err := pw.Close(); err != nil {
		return st, err
	}
	st.Objects, st.RawBytes, st.PackBytes, st.Refs = pw.Count(), pw.RawBytes(), pw.Size(), heads
	return st, nil
}

// chooseHeads returns the head refs of docs (every document when empty),
// sorted by name.
func chooseHeads(s Stores, docs []string) ([]Ref, error) {
	var out []Ref
	if len(docs) == 0 {
		vals, names, err := s.Refs.List(DocPrefix)
		if err != nil {
			return nil, fmt.Errorf("pack: list refs: %w", err)
		}
		for _, n := range names {
			_, head := DocOfRef(n)
			_, published := DocOfPublishedRef(n)
			if head || published {
				out = append(out, Ref{Name: n, ID: vals[n]})
			}
		}
		return out, nil
	}
	seen := map[string]bool{}
	for _, d := range docs {
		name := HeadRef(d)
		if seen[name] {
			continue
		}
		seen[name] = true
		id, err := s.Refs.Get(name)
		if errors.Is(err, refs.ErrNotFound) {
			return nil, errs.E(errs.NotFound, "document %q not found", d)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Ref{Name: name, ID: id})
		pub := DocPrefix + d + PublishedSuffix
		if pid, err := s.Refs.Get(pub); err == nil {
			out = append(out, Ref{Name: pub, ID: pid})
		} else if !errors.Is(err, refs.ErrNotFound) {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// walker walks the object graph. seen holds every object already in the
// pack or known to the receiver.
//
// It is not objstore.Walk because a pack wants two things that walk does
// differently: the haves' closure is marked without reading a single
// content object (a version names its contents; they are leaves), which
// makes incremental exports of a large store cheap, and a document's
// history is emitted oldest first, each version right after its new
// contents and transaction, which is the order that compresses best in a
// chunk.
type walker struct {
	objs *objstore.Store
	seen map[objstore.ID]struct{}
}

// markHave marks have and everything it reaches as held by the receiver.
// Content objects are leaves and are marked without being read. It
// reports false when the store does not have have.
func (w *walker) markHave(ctx context.Context, have objstore.ID) (bool, error) {
	if _, ok := w.seen[have]; ok {
		return true, nil
	}
	if ok, err := w.objs.Has(have); err != nil || !ok {
		return false, err
	}
	stack := []objstore.ID{have}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return true, err
		}
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, ok := w.seen[id]; ok {
			continue
		}
		k, data, err := w.objs.Get(id)
		if err != nil {
			return true, fmt.Errorf("pack: read have %s: %w", id.Short(), err)
		}
		w.seen[id] = struct{}{}
		switch k {
		case objstore.KindVersion:
			v, err := objstore.DecodeVersion(data)
			if err != nil {
				return true, fmt.Errorf("pack: version %s: %w", id.Short(), err)
			}
			for _, b := range v.Blocks {
				w.seen[b.Content] = struct{}{}
			}
			stack = append(stack, v.Parents...)
			if !v.Txn.IsZero() {
				stack = append(stack, v.Txn)
			}
		case objstore.KindTxn:
			t, err := objstore.DecodeTxn(data)
			if err != nil {
				return true, fmt.Errorf("pack: txn %s: %w", id.Short(), err)
			}
			for _, e := range t.Events {
				if !e.Before.IsZero() {
					w.seen[e.Before] = struct{}{}
				}
				if !e.After.IsZero() {
					w.seen[e.After] = struct{}{}
				}
			}
			if !t.BaseVersion.IsZero() {
				stack = append(stack, t.BaseVersion)
			}
		default:
			refs, err := objstore.References(k, data)
			if err != nil {
				return true, err
			}
			stack = append(stack, refs...)
		}
	}
	return true, nil
}

// frame is one object on the emit stack, waiting for its references.
type frame struct {
	id   objstore.ID
	kind objstore.Kind
	data []byte
	refs []objstore.ID
	next int
}

// emit adds root and everything it reaches that is not seen to pw, each
// object after the objects it references (iterative post-order, so deep
// histories do not grow the goroutine stack).
func (w *walker) emit(ctx context.Context, root objstore.ID, pw *Writer) error {
	if _, ok := w.seen[root]; ok {
		return nil
	}
	push := func(stack []*frame, id objstore.ID, from objstore.ID) ([]*frame, error) {
		k, data, err := w.objs.Get(id)
		if errors.Is(err, objstore.ErrNotFound) {
			if from.IsZero() {
				return nil, fmt.Errorf("%w: %s (the ref's target)", ErrMissing, id)
			}
			return nil, fmt.Errorf("%w: %s, referenced by %s; run `folio fsck`", ErrMissing, id, from.Short())
		}
		if err != nil {
			return nil, err
		}
		refs, err := objstore.References(k, data)
		if err != nil {
			return nil, fmt.Errorf("object %s: %w", id.Short(), err)
		}
		w.seen[id] = struct{}{}
		return append(stack, &frame{id: id, kind: k, data: data, refs: refs}), nil
	}
	stack, err := push(nil, root, objstore.ID{})
	if err != nil {
		return err
	}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		f := stack[len(stack)-1]
		descended := false
		for f.next < len(f.refs) {
			child := f.refs[f.next]
			f.next++
			if _, ok := w.seen[child]; ok {
				continue
			}
			if stack, err = push(stack, child, f.id); err != nil {
				return err
			}
			descended = true
			break
		}
		if descended {
			continue
		}
		if err := pw.Add(f.id, f.kind, f.data); err != nil {
			return err
		}
		stack[len(stack)-1] = nil
		stack = stack[:len(stack)-1]
	}
	return nil
}

// ReadHaves parses a have-file: one 64-digit hex version id per line,
// optionally followed by white space and anything (such as a ref name, so
// that `folio pack heads` output is a valid have-file). Blank lines and
// lines starting with '#' are skipped.
func ReadHaves(r io.Reader) ([]objstore.ID, error) {
	var out []objstore.ID
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		if i := strings.IndexAny(s, " \t"); i >= 0 {
			s = s[:i]
		}
		id, err := objstore.ParseID(s)
		if err != nil {
			return nil, errs.E(errs.Invalid, "have-file line %d: %q is not a 64-digit hex version id", line, s)
		}
		out = append(out, id)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("pack: read have-file: %w", err)
	}
	return out, nil
}
