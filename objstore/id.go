package objstore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Kind is an object kind.
type Kind uint8

// The object kinds.
const (
	KindContent Kind = 1 // one block's canonical content
	KindVersion Kind = 2 // a document version
	KindTxn     Kind = 3 // an edit transaction
	KindAsset   Kind = 4 // an uploaded image or file (asset.go)
)

func (k Kind) String() string {
	switch k {
	case KindContent:
		return "content"
	case KindVersion:
		return "version"
	case KindTxn:
		return "txn"
	case KindAsset:
		return "asset"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ID is an object id: a SHA-256 hash.
type ID [32]byte

// Sum returns the id of an object of kind k with canonical bytes data.
func Sum(k Kind, data []byte) ID {
	h := sha256.New()
	h.Write([]byte("folio/"))
	h.Write([]byte(k.String()))
	h.Write([]byte{0})
	h.Write(data)
	var id ID
	h.Sum(id[:0])
	return id
}

// String is the lowercase hex form.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// Short is the first 12 hex digits, for humans.
func (id ID) Short() string { return id.String()[:12] }

// IsZero reports whether id is unset.
func (id ID) IsZero() bool { return id == ID{} }

// ParseID reads the 64-digit hex form.
func ParseID(s string) (ID, error) {
	var id ID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("objstore: %q is not a 64-digit hex object id", s)
	}
	copy(id[:], b)
	return id, nil
}

// MarshalText implements encoding.TextMarshaler (hex).
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler (hex).
func (id *ID) UnmarshalText(b []byte) error {
	v, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// EncodeMsgpack writes id as 32 raw bytes (msgpack bin 8), the canonical
// form that object hashes cover; without it the encoder would use the
// 64-digit text form.
func (id ID) EncodeMsgpack(enc *msgpack.Encoder) error { return enc.EncodeBytes(id[:]) }

// DecodeMsgpack reads the form EncodeMsgpack writes.
func (id *ID) DecodeMsgpack(dec *msgpack.Decoder) error {
	b, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	if len(b) != len(id) {
		return fmt.Errorf("objstore: object id of %d bytes, want %d", len(b), len(id))
	}
	copy(id[:], b)
	return nil
}
