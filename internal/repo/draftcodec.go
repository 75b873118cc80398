package repo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/vmihailenco/msgpack/v5"
)

// draftBlocks is the block list of a draft record. A draft is rewritten on
// every save, so its blocks are packed by hand into one msgpack bin value
// instead of a reflected array of maps: a uvarint block count, then per
// block uvarint id length, id, 32-byte content id, uvarint seq, size and
// count, uvarint number of nested ids, then each nested id as uvarint
// length (at least 1) and bytes.
//
// Decoding checks every count and length against the bytes that remain
// before allocating: a block takes at least minDraftBlock bytes and a
// nested id at least 2, so the decoded blocks take at most a few times
// the record's size (package bounded's contract for custom decoders).
type draftBlocks []draftBlock

// minDraftBlock is the fewest bytes an encoded block takes: an id length,
// the content id and four one-byte uvarints.
const minDraftBlock = 1 + 32 + 4

var errDraftCodec = errors.New("repo: malformed draft record")

// EncodeMsgpack implements msgpack.CustomEncoder.
func (ds draftBlocks) EncodeMsgpack(enc *msgpack.Encoder) error {
	n := 0
	for _, d := range ds {
		n += len(d.ID) + 32 + 24
	}
	buf := make([]byte, 0, n)
	buf = binary.AppendUvarint(buf, uint64(len(ds)))
	for i := range ds {
		buf = appendDraftBlock(buf, &ds[i])
	}
	return enc.EncodeBytes(buf)
}

// appendDraftBlock appends the encoding of one block entry (see
// draftBlocks); layout 2 stores it as the value of the block's key.
func appendDraftBlock(buf []byte, d *draftBlock) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(d.ID)))
	buf = append(buf, d.ID...)
	buf = append(buf, d.Content[:]...)
	buf = binary.AppendUvarint(buf, d.Seq)
	buf = binary.AppendUvarint(buf, uint64(d.Size))
	buf = binary.AppendUvarint(buf, uint64(d.Count))
	buf = binary.AppendUvarint(buf, uint64(len(d.Nested)))
	for _, id := range d.Nested {
		buf = binary.AppendUvarint(buf, uint64(len(id)))
		buf = append(buf, id...)
	}
	return buf
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (ds *draftBlocks) DecodeMsgpack(dec *msgpack.Decoder) error {
	buf, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	count, p := binary.Uvarint(buf)
	if p <= 0 || count > uint64(len(buf)-p)/minDraftBlock {
		return fmt.Errorf("%w: %d blocks cannot fit in %d bytes", errDraftCodec, count, len(buf)-max(p, 0))
	}
	out := make([]draftBlock, count)
	for i := range out {
		n, err := decodeDraftBlock(buf[p:], &out[i])
		if err != nil {
			return err
		}
		p += n
	}
	if p != len(buf) {
		return fmt.Errorf("%w: %d trailing bytes", errDraftCodec, len(buf)-p)
	}
	*ds = out
	return nil
}

// decodeDraftBlock decodes one block entry from the start of buf into d
// and returns the bytes it took. Every length is checked against the
// bytes that remain before anything is allocated.
func decodeDraftBlock(buf []byte, d *draftBlock) (int, error) {
	p := 0
	uv := func() (uint64, error) {
		v, n := binary.Uvarint(buf[p:])
		if n <= 0 {
			return 0, errDraftCodec
		}
		p += n
		return v, nil
	}
	str := func() (string, error) {
		l, err := uv()
		if err != nil || uint64(len(buf)-p) < l {
			return "", errDraftCodec
		}
		s := string(buf[p : p+int(l)])
		p += int(l)
		return s, nil
	}
	var err error
	if d.ID, err = str(); err != nil {
		return 0, err
	}
	if len(buf)-p < 32 {
		return 0, errDraftCodec
	}
	copy(d.Content[:], buf[p:p+32])
	p += 32
	var size, cnt, nn uint64
	if d.Seq, err = uv(); err != nil {
		return 0, err
	}
	if size, err = uv(); err != nil {
		return 0, err
	}
	if cnt, err = uv(); err != nil {
		return 0, err
	}
	if nn, err = uv(); err != nil || nn > uint64(len(buf)-p)/2 {
		return 0, fmt.Errorf("%w: %d nested ids cannot fit in %d bytes", errDraftCodec, nn, len(buf)-p)
	}
	if size > math.MaxInt32 || cnt > math.MaxInt32 {
		return 0, fmt.Errorf("%w: block size %d or count %d out of range", errDraftCodec, size, cnt)
	}
	d.Size, d.Count = int(size), int(cnt)
	if nn > 0 {
		d.Nested = make([]string, 0, nn)
	}
	for j := uint64(0); j < nn; j++ {
		id, err := str()
		if err != nil {
			return 0, err
		}
		if id == "" {
			return 0, fmt.Errorf("%w: empty nested block id", errDraftCodec)
		}
		d.Nested = append(d.Nested, id)
	}
	return p, nil
}
