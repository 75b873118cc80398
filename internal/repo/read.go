package repo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

// GetDoc describes document doc.
func (r *Repo) GetDoc(ctx context.Context, doc string) (DocInfo, error) {
	if err := ctxErr(ctx); err != nil {
		return DocInfo{}, err
	}
	d, err := r.loadDoc(doc)
	if err != nil {
		return DocInfo{}, err
	}
	dr, err := r.readDraftHeader(doc)
	if err != nil {
		return DocInfo{}, err
	}
	return r.docInfo(d, dr)
}

func (r *Repo) docInfo(d *docRec, dr *draftRec) (DocInfo, error) {
	head, err := r.logEntry(d.ID, d.Seq)
	if err != nil {
		return DocInfo{}, err
	}
	return DocInfo{ID: d.ID, Title: dr.Attrs.Title, Owner: d.Owner, Created: time.UnixMilli(d.Created).UTC(),
		Updated: time.UnixMilli(max(dr.LastChange, head.Time, d.Created)).UTC(),
		Head:    d.Label, Versions: d.Seq, Unsealed: dr.Unsealed, DraftSeq: dr.Seq}, nil
}

// ListDocs lists documents, all of them when owner is "", else those of the
// user whose id is owner, in id order.
func (r *Repo) ListDocs(ctx context.Context, owner string) ([]DocInfo, error) {
	p := kv.TableKey("doc")
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []DocInfo
	for it.First(); it.Valid(); it.Next() {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		var d docRec
		if err := kv.Unmarshal(it.Value(), &d); err != nil {
			return nil, fmt.Errorf("decode document record %s: %w", it.Key(), err)
		}
		if owner != "" && d.Owner != owner || d.Deleted != 0 {
			continue
		}
		dr, err := r.readDraftHeader(d.ID)
		if err != nil {
			return nil, err
		}
		di, err := r.docInfo(&d, dr)
		if err != nil {
			return nil, err
		}
		out = append(out, di)
	}
	return out, it.Error()
}

// DocOwner returns the user id of doc's owner ("" for nobody), or a
// NotFoundError. Access checks compare it with the caller's user id.
func (r *Repo) DocOwner(doc string) (string, error) {
	d, err := r.loadDoc(doc)
	if err != nil {
		return "", err
	}
	return d.Owner, nil
}

func (r *Repo) logEntry(doc string, seq uint64) (logRec, error) {
	var lr logRec
	ok, err := getRec(r.db, vlogKey(doc, seq), &lr)
	if err != nil {
		return lr, err
	}
	if !ok {
		return lr, fmt.Errorf("document %s has no log entry for version %d: run folio fsck", doc, seq)
	}
	return lr, nil
}

func (r *Repo) versionInfo(doc string, seq uint64) (VersionInfo, error) {
	lr, err := r.logEntry(doc, seq)
	if err != nil {
		return VersionInfo{}, err
	}
	return infoOf(doc, seq, lr), nil
}

func (r *Repo) infoByHash(doc string, id objstore.ID) (VersionInfo, error) {
	v, err := r.objs.GetVersion(id)
	if err != nil {
		return VersionInfo{}, err
	}
	return r.versionInfo(doc, v.Seq)
}

// DraftName names a document's draft where a version is read (Show,
// Diff): `show ID@draft`, `diff ID head draft`. It is not a version, and
// verbs that need one (restore, explain) refuse it.
const DraftName = "draft"

// resolve turns a version name into a version seq: a label ("v2.r3"),
// "" or "head" (any case) for the head, and "head~N" for the version N
// before it in the log (head~0 is the head). It is the one resolver of
// version names: every verb and request that takes a label goes through it.
func (r *Repo) resolve(doc, label string) (uint64, *docRec, error) {
	d, err := r.loadDoc(doc)
	if err != nil {
		return 0, nil, err
	}
	if label == "" || strings.EqualFold(label, "head") {
		return d.Seq, d, nil
	}
	if n, ok := headOffset(label); ok {
		if n < 0 {
			return 0, d, errs.E(errs.Invalid, "version name %q: after head~ comes a number of versions back, like head~1", label)
		}
		if uint64(n) >= d.Seq {
			return 0, d, &NotFoundError{What: "version", Doc: doc, Name: doc + "@" + label, Latest: d.Label,
				Detail: fmt.Sprintf("%s has %d versions, so head~%d is the oldest", doc, d.Seq, d.Seq-1)}
		}
		return d.Seq - uint64(n), d, nil
	}
	if strings.EqualFold(label, DraftName) {
		return 0, d, &NotVersionError{Doc: doc, Name: doc + "@" + label}
	}
	v, err := kv.Get(r.db, vlabelKey(doc, label))
	if errors.Is(err, kv.ErrNotFound) {
		return 0, d, &NotFoundError{What: "version", Doc: doc, Name: doc + "@" + label, Latest: d.Label}
	}
	if err != nil {
		return 0, d, err
	}
	return kv.ParseUint64(v), d, nil
}

// headOffset reads "head~N" (any case): ok when label starts with head~;
// n is -1 when what follows is not a non-negative number.
func headOffset(label string) (n int, ok bool) {
	if len(label) < 5 || !strings.EqualFold(label[:5], "head~") {
		return 0, false
	}
	n, err := strconv.Atoi(label[5:])
	if err != nil || n < 0 || strconv.Itoa(n) != label[5:] {
		return -1, true
	}
	return n, true
}

// ResolveLabel returns the version info of label (any version name
// resolve takes).
func (r *Repo) ResolveLabel(ctx context.Context, doc, label string) (VersionInfo, error) {
	seq, _, err := r.resolve(doc, label)
	if err != nil {
		return VersionInfo{}, err
	}
	return r.versionInfo(doc, seq)
}

func (r *Repo) versionByLabel(doc, label string) (*objstore.Version, error) {
	seq, _, err := r.resolve(doc, label)
	if err != nil {
		return nil, err
	}
	lr, err := r.logEntry(doc, seq)
	if err != nil {
		return nil, err
	}
	return r.objs.GetVersion(lr.Hash)
}

// Log lists versions newest first: at most limit (0: all) with seq below
// before (0: from the head).
func (r *Repo) Log(ctx context.Context, doc string, limit int, before uint64) ([]VersionInfo, error) {
	if _, err := r.loadDoc(doc); err != nil {
		return nil, err
	}
	p := vlogPrefix(doc)
	upper := kv.PrefixEnd(p)
	if before > 0 {
		upper = vlogKey(doc, before)
	}
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	published, err := r.refs.Get(PublishedRef(doc))
	if err != nil && !errors.Is(err, refs.ErrNotFound) {
		return nil, err
	}
	var out []VersionInfo
	for it.Last(); it.Valid() && (limit <= 0 || len(out) < limit); it.Prev() {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		var lr logRec
		if err := kv.Unmarshal(it.Value(), &lr); err != nil {
			return nil, fmt.Errorf("decode log entry of %s: %w", doc, err)
		}
		vi := infoOf(doc, kv.ParseUint64(it.Key()), lr)
		vi.Published = !published.IsZero() && vi.Hash == published
		out = append(out, vi)
	}
	return out, it.Error()
}

// Snapshot is a materialized version.
type Snapshot struct {
	Info  VersionInfo
	Body  flowdoc.Document
	Attrs flowdoc.Attributes
}

// Show materializes version label (any version name resolve takes), or
// the draft when label is DraftName: its Info is then the version the
// draft is based on.
func (r *Repo) Show(ctx context.Context, doc, label string) (Snapshot, error) {
	if err := ctxErr(ctx); err != nil {
		return Snapshot{}, err
	}
	if strings.EqualFold(label, DraftName) {
		return r.showDraft(ctx, doc)
	}
	seq, _, err := r.resolve(doc, label)
	if err != nil {
		return Snapshot{}, err
	}
	lr, err := r.logEntry(doc, seq)
	if err != nil {
		return Snapshot{}, err
	}
	v, err := r.objs.GetVersion(lr.Hash)
	if err != nil {
		return Snapshot{}, err
	}
	body, err := r.materialize(v.Blocks)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Info: infoOf(doc, seq, lr), Body: body, Attrs: v.Attrs}, nil
}

func (r *Repo) showDraft(ctx context.Context, doc string) (Snapshot, error) {
	dr, err := r.Draft(ctx, doc)
	if err != nil {
		return Snapshot{}, err
	}
	base, err := r.ResolveLabel(ctx, doc, dr.Head)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Info: base, Body: dr.Body, Attrs: dr.Attrs}, nil
}

// Diff compares versions a and b of doc block by block; either may be
// DraftName.
func (r *Repo) Diff(ctx context.Context, doc, a, b string) ([]flowdoc.BlockChange, error) {
	sa, err := r.Show(ctx, doc, a)
	if err != nil {
		return nil, err
	}
	sb, err := r.Show(ctx, doc, b)
	if err != nil {
		return nil, err
	}
	return flowdoc.Diff(sa.Body, sb.Body), nil
}

// BlockHistory lists the revisions of one block, oldest first: every
// version where it was added, changed, restored or deleted.
func (r *Repo) BlockHistory(ctx context.Context, doc, blockID string) ([]BlockRevision, error) {
	d, err := r.loadDoc(doc)
	if err != nil {
		return nil, err
	}
	p := bidxPrefix(doc, blockID)
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []BlockRevision
	for it.First(); it.Valid(); it.Next() {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		seq := kv.ParseUint64(it.Key())
		lr, err := r.logEntry(doc, seq)
		if err != nil {
			return nil, err
		}
		br := BlockRevision{Label: lr.Label, Seq: seq, Kind: lr.Kind, Author: lr.Author, Time: lr.Time}
		var v *objstore.Version
		if len(it.Value()) == 1 {
			if v, err = r.objs.GetVersion(lr.Hash); err != nil {
				return nil, fmt.Errorf("read version %s of %s: %w", lr.Label, doc, err)
			}
		}
		if br.Content, br.Deleted, err = r.bidxValue(doc, blockID, seq, it.Value(), v); err != nil {
			return nil, err
		}
		out = append(out, br)
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &NotFoundError{What: "block", Doc: doc, Name: blockID, Latest: d.Label}
	}
	return out, nil
}

// BlockAt returns the content id of block at the head: a point read of the
// block-revision index ("is block X still at revision R"). ok is false when
// the block is not in the head.
func (r *Repo) BlockAt(doc, blockID string) (objstore.ID, bool, error) {
	p := bidxPrefix(doc, blockID)
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return objstore.ID{}, false, err
	}
	defer it.Close()
	if !it.Last() {
		return objstore.ID{}, false, it.Error()
	}
	id, deleted, err := r.bidxValue(doc, blockID, kv.ParseUint64(it.Key()), it.Value(), nil)
	return id, !deleted && err == nil, err
}

// ParseRef splits "ID@LABEL" into its parts; the label may be empty.
func ParseRef(s string) (doc, label string) {
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// ParseLabel reads "v<major>.r<revision>".
func ParseLabel(s string) (major, rev int, err error) {
	var ok bool
	if !strings.HasPrefix(s, "v") {
		return 0, 0, fmt.Errorf("label %q is not of the form vN.rM", s)
	}
	a, b, ok := strings.Cut(s[1:], ".r")
	if !ok {
		return 0, 0, fmt.Errorf("label %q is not of the form vN.rM", s)
	}
	if major, err = strconv.Atoi(a); err != nil || major < 1 {
		return 0, 0, fmt.Errorf("label %q is not of the form vN.rM", s)
	}
	if rev, err = strconv.Atoi(b); err != nil || rev < 0 {
		return 0, 0, fmt.Errorf("label %q is not of the form vN.rM", s)
	}
	return major, rev, nil
}
