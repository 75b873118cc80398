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
	for _, d := range ds {
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
	}
	return enc.EncodeBytes(buf)
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (ds *draftBlocks) DecodeMsgpack(dec *msgpack.Decoder) error {
	buf, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
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
	count, err := uv()
	if err != nil || count > uint64(len(buf)-p)/minDraftBlock {
		return fmt.Errorf("%w: %d blocks cannot fit in %d bytes", errDraftCodec, count, len(buf)-p)
	}
	out := make([]draftBlock, count)
	for i := range out {
		d := &out[i]
		if d.ID, err = str(); err != nil {
			return err
		}
		if len(buf)-p < 32 {
			return errDraftCodec
		}
		copy(d.Content[:], buf[p:p+32])
		p += 32
		var size, cnt, nn uint64
		if d.Seq, err = uv(); err != nil {
			return err
		}
		if size, err = uv(); err != nil {
			return err
		}
		if cnt, err = uv(); err != nil {
			return err
		}
		if nn, err = uv(); err != nil || nn > uint64(len(buf)-p)/2 {
			return fmt.Errorf("%w: %d nested ids cannot fit in %d bytes", errDraftCodec, nn, len(buf)-p)
		}
		if size > math.MaxInt32 || cnt > math.MaxInt32 {
			return fmt.Errorf("%w: block size %d or count %d out of range", errDraftCodec, size, cnt)
		}
		d.Size, d.Count = int(size), int(cnt)
		if nn > 0 {
			d.Nested = make([]string, 0, nn)
		}
		for j := uint64(0); j < nn; j++ {
			id, err := str()
			if err != nil {
				return err
			}
			if id == "" {
				return fmt.Errorf("%w: empty nested block id", errDraftCodec)
			}
			d.Nested = append(d.Nested, id)
		}
	}
	if p != len(buf) {
		return fmt.Errorf("%w: %d trailing bytes", errDraftCodec, len(buf)-p)
	}
	*ds = out
	return nil
}
