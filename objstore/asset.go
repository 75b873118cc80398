package objstore

import (
	"bytes"
	"fmt"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/mediatype"
)

// MaxAsset bounds an asset's bytes whatever the configuration: the
// canonical form (the bytes plus some 40 of type and size) must stay
// well under MaxObject, which packs and every reader also hold to.
const MaxAsset = 24 << 20

// Asset is an uploaded image or file (docs/objects.md, kind 4). Its id
// is the hash of its canonical form; the type and dimensions are the ones
// package mediatype sniffs from Data, so equal bytes are one asset
// whoever uploaded them under whatever name (names belong to the blocks
// and the upload record, not to the object).
type Asset struct {
	MIME   string `msgpack:"mime"`
	Width  int    `msgpack:"w,omitempty"`
	Height int    `msgpack:"h,omitempty"`
	Data   []byte `msgpack:"data"`
}

// NewAsset sniffs data and returns its asset, or mediatype's refusal
// (kind errs.Unsupported).
func NewAsset(data []byte) (*Asset, error) {
	t, err := mediatype.Sniff(data)
	if err != nil {
		return nil, err
	}
	return &Asset{MIME: t.MIME, Width: t.Width, Height: t.Height, Data: data}, nil
}

// Encode returns a's canonical encoding and id.
func (a *Asset) Encode() ([]byte, ID, error) { return encode(KindAsset, a) }

// DecodeAsset decodes an asset's canonical bytes (bounded, as every
// decoder here).
func DecodeAsset(data []byte) (*Asset, error) {
	var a Asset
	if err := kv.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("%w: decode asset: %v", ErrCorrupt, err)
	}
	return &a, nil
}

// CheckAsset reports whether data decodes as an asset whose recorded
// type and dimensions are exactly what its bytes sniff as, within
// MaxAsset: what fsck and a pack import check, so that no pack can make
// the store serve bytes under a type they do not have.
func CheckAsset(data []byte) error {
	a, err := DecodeAsset(data)
	if err != nil {
		return err
	}
	if len(a.Data) > MaxAsset {
		return fmt.Errorf("%w: asset of %d bytes, more than %d", ErrCorrupt, len(a.Data), MaxAsset)
	}
	t, err := mediatype.Sniff(a.Data)
	if err != nil {
		return fmt.Errorf("%w: asset bytes refused: %v", ErrCorrupt, err)
	}
	if t.MIME != a.MIME || t.Width != a.Width || t.Height != a.Height {
		return fmt.Errorf("%w: asset records %s %dx%d, its bytes are %s %dx%d", ErrCorrupt, a.MIME, a.Width, a.Height, t.MIME, t.Width, t.Height)
	}
	return nil
}

// PutAsset adds a to b unless the store has it, and returns its id.
func (s *Store) PutAsset(b *kv.Batch, a *Asset) (ID, error) {
	if len(a.Data) > MaxAsset {
		return ID{}, fmt.Errorf("objstore: asset of %d bytes, more than %d", len(a.Data), MaxAsset)
	}
	data, id, err := a.Encode()
	if err != nil {
		return ID{}, err
	}
	e := Encode(KindAsset, data)
	return id, s.PutEncoded(b, e)
}

// GetAsset reads and decodes asset id.
func (s *Store) GetAsset(id ID) (*Asset, error) {
	k, data, err := s.Get(id)
	if err != nil {
		return nil, err
	}
	if k != KindAsset {
		return nil, fmt.Errorf("%w: %s is a %s, not an asset", ErrNotFound, id.Short(), k)
	}
	return DecodeAsset(data)
}

var assetMarker = []byte(flowdoc.AssetScheme)

// contentAssets returns the assets a content object's canonical bytes
// reference (media and file blocks whose src is a folio-asset: URL,
// nested ones too). Content without the scheme's bytes anywhere is not
// decoded, so walks stay cheap for the blocks that hold no asset.
func contentAssets(data []byte) ([]ID, error) {
	if !bytes.Contains(data, assetMarker) {
		return nil, nil
	}
	b, err := DecodeContent(data)
	if err != nil {
		return nil, err
	}
	var out []ID
	for _, h := range flowdoc.AssetRefs(&b) {
		id, err := ParseID(h)
		if err != nil {
			continue // validation refuses it; a stored one references nothing
		}
		out = append(out, id)
	}
	return out, nil
}

// VersionAssets returns the assets v's blocks reference, each once, in
// block order. It reads every content object of v.
func (s *Store) VersionAssets(v *Version) ([]ID, error) {
	var out []ID
	seen := map[ID]bool{}
	for _, b := range v.Blocks {
		data, err := s.GetContent(b.Content)
		if err != nil {
			return nil, err
		}
		ids, err := contentAssets(data)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out, nil
}
