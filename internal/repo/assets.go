package repo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
)

// DefaultMaxAsset is the default limit of one asset's bytes (Options.MaxAsset).
const DefaultMaxAsset = 10 << 20

// CodeUnknownAsset (invalid): a save names an asset the store does not hold.
const CodeUnknownAsset = "unknown_asset"

// AssetInfo describes a stored asset.
type AssetInfo struct {
	Hash   objstore.ID `json:"hash"`
	URL    string      `json:"url"` // folio-asset:<hash>
	MIME   string      `json:"mime"`
	Size   int         `json:"size"`
	Width  int         `json:"width"`
	Height int         `json:"height"`
	Name   string      `json:"name"`
}

// assetRec is t/asset/<hex id>: the last upload of an asset (its time
// keeps an unreferenced upload from gc for the grace period).
type assetRec struct {
	Name     string `msgpack:"name,omitempty"`
	Uploader string `msgpack:"by,omitempty"` // user id
	Time     int64  `msgpack:"time"`         // Unix ms of the last upload
}

func assetKey(id objstore.ID) []byte { return kv.TableKey("asset", id.String()) }

// assetAccessKey is t/assetacc/<hex id>\x00<user id>: empty, present when
// the user may read the asset through the API. It is written at upload
// for the uploader; a document may reference only assets its owner may
// read (noteAssets), so the owner of every document whose draft or a
// version references an asset holds it too. Reading an asset is then one
// point read.
func assetAccessKey(id objstore.ID, user string) []byte {
	return kv.TableKey("assetacc", id.String(), user)
}

// MaxAsset is the limit of one asset's bytes.
func (r *Repo) MaxAsset() int { return r.maxAsset }

// PutAsset stores data as an asset uploaded by the user with id user
// under name (may be empty), or finds it stored: the type is sniffed
// from the bytes and must be allowed (errs.Unsupported otherwise), the
// size at most MaxAsset (errs.TooLarge). The upload is durable when it
// returns, and kept from gc for the grace period even while nothing
// references it.
func (r *Repo) PutAsset(ctx context.Context, data []byte, name, user string) (AssetInfo, error) {
	if len(data) > r.maxAsset {
		return AssetInfo{}, errs.E(errs.TooLarge, "the file is %s, more than the asset limit of %s ([limits] asset_size)", sizeText(len(data)), sizeText(r.maxAsset))
	}
	name = cleanAssetName(name)
	a, err := objstore.NewAsset(data)
	if err != nil {
		return AssetInfo{}, err
	}
	if err := ctxErr(ctx); err != nil {
		return AssetInfo{}, err
	}
	release := r.db.WritePass()
	defer release()
	b := r.db.NewBatch()
	defer b.Close()
	id, err := r.objs.PutAsset(b, a)
	if err != nil {
		return AssetInfo{}, err
	}
	if err := kv.SetRecord(b, assetKey(id), assetRec{Name: name, Uploader: user, Time: r.now().UnixMilli()}); err != nil {
		return AssetInfo{}, err
	}
	if user != "" {
		if err := b.Set(assetAccessKey(id, user), nil); err != nil {
			return AssetInfo{}, err
		}
	}
	if err := r.db.Apply(b, kv.Sync); err != nil {
		return AssetInfo{}, err
	}
	return infoOfAsset(id, a, name), nil
}

func infoOfAsset(id objstore.ID, a *objstore.Asset, name string) AssetInfo {
	return AssetInfo{Hash: id, URL: flowdoc.AssetURL(id.String()), MIME: a.MIME, Size: len(a.Data), Width: a.Width, Height: a.Height, Name: name}
}

// cleanAssetName keeps the last element of a path, without control
// characters, at most 255 bytes.
func cleanAssetName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f {
			return -1
		}
		return c
	}, strings.TrimSpace(name))
	for len(name) > 255 {
		_, n := lastRune(name)
		name = name[:len(name)-n]
	}
	return name
}

func lastRune(s string) (rune, int) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i]&0xc0 != 0x80 {
			return rune(s[i]), len(s) - i
		}
	}
	return 0, 1
}

func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// errAssetNotFound answers every asset a caller may not read, exactly
// like one that does not exist.
func errAssetNotFound(id string) error {
	return &NotFoundError{What: "asset", Name: id}
}

// Asset returns the stored asset id and the name of its last upload. An
// unknown id is ErrNotFound.
func (r *Repo) Asset(ctx context.Context, id objstore.ID) (*objstore.Asset, AssetInfo, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, AssetInfo{}, err
	}
	a, err := r.objs.GetAsset(id)
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, AssetInfo{}, errAssetNotFound(id.String())
	}
	if err != nil {
		return nil, AssetInfo{}, err
	}
	var rec assetRec
	if _, err := kv.GetRecord(r.db, assetKey(id), &rec); err != nil {
		return nil, AssetInfo{}, err
	}
	return a, infoOfAsset(id, a, rec.Name), nil
}

// MayReadAsset reports whether the user with id user may read asset id
// through the API: its uploader, or the owner of a document whose draft
// or a version referenced it when saved. One point read; admins read
// every asset and are not asked about.
func (r *Repo) MayReadAsset(id objstore.ID, user string) (bool, error) {
	if user == "" {
		return false, nil
	}
	return kv.Has(r.db, assetAccessKey(id, user))
}

// noteAssets checks the assets a new block of a document owned by the
// user with id owner references: each must be in the store and readable
// by the owner (uploaded by them, or referenced by another of their
// documents; a document of nobody, which only admins reach, may name any
// stored asset). Anything else is refused as unknown (CodeUnknownAsset),
// alike: nothing may reference what a walk, a pack or a page could not
// find, and a hash is not a key.
func (r *Repo) noteAssets(owner string, blk *flowdoc.Block) error {
	for _, h := range flowdoc.AssetRefs(blk) {
		id, err := objstore.ParseID(h)
		if err != nil {
			return errs.C(errs.Invalid, CodeUnknownAsset, "block %s: %v", blk.ID, err)
		}
		r.db.Touch(objstore.Key(id)) // a collection in progress keeps it
		ok, err := r.objs.Has(id)
		if err == nil && ok && owner != "" {
			// Only what the owner may read already: knowing a hash gives
			// no access, and a save tells nobody whether the store holds
			// a file they cannot read.
			ok, err = r.MayReadAsset(id, owner)
		}
		if err != nil {
			return err
		}
		if !ok {
			return errs.C(errs.Invalid, CodeUnknownAsset, "block %s names asset %s, which this store does not hold (unknown asset); upload the file first (POST /v1/assets, folio asset add)", blk.ID, id.Short())
		}
	}
	return nil
}

// grantAssets records in b that the user with id owner may read every
// asset the given content objects reference (a document's history came
// in through a pack import or changed owner: its owner reads what it
// shows).
func (r *Repo) grantAssets(b *kv.Batch, owner string, contents map[objstore.ID]bool) error {
	if owner == "" {
		return nil
	}
	for c := range contents {
		data, err := r.objs.GetContent(c)
		if err != nil {
			return err
		}
		ids, err := objstore.References(objstore.KindContent, data)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := b.Set(assetAccessKey(id, owner), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// grantDocAssets is grantAssets for every content document doc's
// history (each version in its log) and draft name.
func (r *Repo) grantDocAssets(b *kv.Batch, doc, owner string) error {
	contents := map[objstore.ID]bool{}
	p := vlogPrefix(doc)
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		var lr logRec
		if err := kv.Unmarshal(it.Value(), &lr); err != nil {
			it.Close()
			return fmt.Errorf("decode %s: %w", it.Key(), err)
		}
		v, err := r.objs.GetVersion(lr.Hash)
		if err != nil {
			it.Close()
			return fmt.Errorf("read version %s of %s: %w", lr.Label, doc, err)
		}
		for _, e := range v.Blocks {
			contents[e.Content] = true
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	dr, err := readDraft(r.db, doc) // not loadDraft, which takes it from the writers' cache
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if dr != nil {
		for _, blk := range dr.Blocks {
			contents[blk.Content] = true
		}
	}
	return r.grantAssets(b, owner, contents)
}

// recentAssets lists the assets uploaded after cutoff (gc keeps them).
func (r *Repo) recentAssets(ctx context.Context, cutoff time.Time) ([]objstore.ID, error) {
	p := kv.TableKey("asset")
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []objstore.ID
	for it.First(); it.Valid(); it.Next() {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		var rec assetRec
		if err := kv.Unmarshal(it.Value(), &rec); err != nil {
			return nil, fmt.Errorf("gc: decode asset record %q: %w", it.Key(), err)
		}
		id, err := objstore.ParseID(string(it.Key()[len(p):]))
		if err != nil {
			return nil, fmt.Errorf("gc: asset record key %q: %w", it.Key(), err)
		}
		if rec.Time >= cutoff.UnixMilli() {
			out = append(out, id)
		}
	}
	return out, it.Error()
}

// deleteAssetRecords adds to b the deletion of the records of assets gc
// removes.
func deleteAssetRecords(b *kv.Batch, id objstore.ID) error {
	if err := b.Delete(assetKey(id)); err != nil {
		return err
	}
	p := kv.TableKey("assetacc", id.String(), "")
	return b.DeleteRange(p, kv.PrefixEnd(p))
}

// ListAssets returns the ids of every asset the store holds, whatever
// brought it (upload, pack import): what a mirror sends as haves, so that
// a pull sends no asset it holds. It reads every object's kind byte.
func (r *Repo) ListAssets(ctx context.Context) ([]objstore.ID, error) {
	p := []byte(kv.PrefixObject)
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []objstore.ID
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if n++; n%1024 == 0 {
			if err := ctxErr(ctx); err != nil {
				return nil, err
			}
		}
		var id objstore.ID
		if len(it.Key()) != len(p)+len(id) {
			continue
		}
		if v := it.Value(); len(v) >= 2 && objstore.Kind(v[1]) == objstore.KindAsset {
			copy(id[:], it.Key()[len(p):])
			out = append(out, id)
		}
	}
	return out, it.Error()
}
