package pack

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/objstore"
	"github.com/klauspost/compress/zstd"
)

// Format constants. docs/packs.md specifies the layout byte by byte.
const (
	// Magic opens every pack.
	Magic = "FOLIOPAK"
	// FormatVersion is the version this package writes and the only one it reads.
	FormatVersion = 1
	// Streamed in the header's object count means "not known when the
	// header was written"; the trailer always carries the real count.
	Streamed = ^uint64(0)
	// MaxRefName bounds a ref name in the header.
	MaxRefName = 1024
	// MaxRefs bounds the number of refs a header may carry.
	MaxRefs = 1 << 20
	// MaxRefBytes bounds the header's refs section (names, lengths and
	// ids), which a reader holds in memory.
	MaxRefBytes = 64 << 20
	// MaxObject bounds one object's canonical bytes (objstore.MaxObject).
	MaxObject = objstore.MaxObject
	// MaxChunk bounds a chunk's uncompressed size; with MaxObject it is
	// what bounds a reader's memory.
	MaxChunk = 64 << 20
	// ChunkSize is the uncompressed size at which a Writer closes a chunk.
	ChunkSize = 4 << 20

	tagChunk   = 'C'
	tagEnd     = 'E'
	headerSize = 24 // magic, version, flags, count, ref count
	entryHead  = 1 + 32 + 4
	chunkHead  = 1 + 4 + 4 + 4
	sumSize    = sha256.Size
)

var (
	// ErrFormat is returned (wrapped in a *FormatError) when a pack is
	// truncated, corrupted, not a pack, or breaks the format.
	ErrFormat error = errs.E(errs.Invalid, "pack: invalid pack")
	// ErrRefused is returned by Import when a ref in the pack would move a
	// document's head backwards or sideways, or names something that is
	// not a document head. Nothing moved.
	ErrRefused error = errs.E(errs.Conflict, "pack: refused")
	// ErrIncomplete is returned by Import when an object in the pack
	// references an object that is neither earlier in the pack nor in the
	// store (the pack was made against haves this store lacks).
	ErrIncomplete error = errs.E(errs.Invalid, "pack: incomplete")
	// ErrMissing is returned by Export when an object reachable from a ref
	// is not in the store (a damaged store: run fsck).
	ErrMissing error = errs.E(errs.Corrupt, "pack: object missing from store")
)

// FormatError says where and why a pack is invalid. Offset is the byte
// offset in the pack of the field or chunk that failed; Entry, when not
// zero, is the 1-based index of the object entry concerned.
type FormatError struct {
	Offset int64
	Entry  uint64
	Reason string
}

func (e *FormatError) Error() string {
	if e.Entry > 0 {
		return fmt.Sprintf("pack: invalid pack at byte %d (entry %d): %s", e.Offset, e.Entry, e.Reason)
	}
	return fmt.Sprintf("pack: invalid pack at byte %d: %s", e.Offset, e.Reason)
}

// Unwrap makes errors.Is(err, ErrFormat) true.
func (e *FormatError) Unwrap() error { return ErrFormat }

// Ref is one ref a pack carries: a name and the object it points at.
type Ref struct {
	Name string      `json:"name"`
	ID   objstore.ID `json:"id"`
}

// Header is what a pack says about itself before its entries.
type Header struct {
	Version uint16 // FormatVersion
	Count   uint64 // number of objects, or Streamed
	Refs    []Ref  // sorted by name, names unique
}

// Entry is one object read from a pack.
type Entry struct {
	Kind objstore.Kind
	ID   objstore.ID
	Data []byte // canonical bytes; valid until the next call to Reader.Next
}

func checkRefs(refs []Ref) error {
	if len(refs) > MaxRefs {
		return fmt.Errorf("%d refs, at most %d allowed", len(refs), MaxRefs)
	}
	size := 0
	for _, r := range refs {
		size += 2 + len(r.Name) + len(r.ID)
	}
	if size > MaxRefBytes {
		return fmt.Errorf("refs take %d bytes, at most %d allowed", size, MaxRefBytes)
	}
	for i, r := range refs {
		if err := checkRefName(r.Name); err != nil {
			return err
		}
		if r.ID.IsZero() {
			return fmt.Errorf("ref %q points at the zero id", r.Name)
		}
		if i > 0 && refs[i-1].Name >= r.Name {
			return fmt.Errorf("refs not sorted or not unique at %q", r.Name)
		}
	}
	return nil
}

func checkRefName(name string) error {
	if name == "" || len(name) > MaxRefName || !utf8.ValidString(name) || strings.ContainsAny(name, "\x00\n") {
		return fmt.Errorf("ref name %q is empty, longer than %d bytes, not UTF-8 or holds NUL/newline", name, MaxRefName)
	}
	return nil
}

func knownKind(k objstore.Kind) bool {
	return k == objstore.KindContent || k == objstore.KindVersion || k == objstore.KindTxn || k == objstore.KindAsset
}

// Writer writes a pack. It holds at most two chunks (about 2×ChunkSize
// bytes) in memory: the one being filled and the one being compressed and
// written by a background goroutine, so that reading objects and
// compressing overlap. Callers Add objects in dependency order (an object
// after every object it references that the receiver may lack) and must
// Close the Writer to write the trailer (and to stop the goroutine); Close
// does not close the underlying io.Writer. A Writer is not safe for
// concurrent use.
type Writer struct {
	// While a chunk is in flight (pending != nil) its goroutine alone
	// touches w, h, off, enc, z and spare; the caller's side waits on
	// pending before using them.
	w       io.Writer
	h       hash.Hash
	off     int64 // bytes written
	enc     *zstd.Encoder
	z       []byte // compressed chunk scratch
	spare   []byte // the buffer of the chunk last written, for reuse
	pending chan error

	chunk    []byte // uncompressed entries of the open chunk
	inChunk  uint32
	count    uint64
	declared uint64
	raw      uint64
	err      error // sticky
	closed   bool
}

// NewWriter writes h's header to w and returns a Writer for the entries.
// h.Count is the number of objects that will be added, or Streamed; h.Refs
// are sorted by NewWriter. h.Version is ignored (FormatVersion is written).
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	refs := append([]Ref(nil), h.Refs...)
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	if err := checkRefs(refs); err != nil {
		return nil, fmt.Errorf("pack: write header: %v", err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(ChunkSize), zstd.WithEncoderCRC(true))
	if err != nil {
		return nil, fmt.Errorf("pack: zstd: %w", err)
	}
	pw := &Writer{w: w, h: sha256.New(), enc: enc, declared: h.Count}
	b := make([]byte, 0, headerSize)
	b = append(b, Magic...)
	b = binary.BigEndian.AppendUint16(b, FormatVersion)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint64(b, h.Count)
	b = binary.BigEndian.AppendUint32(b, uint32(len(refs)))
	for _, r := range refs {
		b = binary.BigEndian.AppendUint16(b, uint16(len(r.Name)))
		b = append(b, r.Name...)
		b = append(b, r.ID[:]...)
	}
	if err := pw.write(b); err != nil {
		enc.Close()
		return nil, err
	}
	return pw, nil
}

// write writes b to the pack. It does not touch w.err, because the chunk
// goroutine calls it; callers record the error.
func (w *Writer) write(b []byte) error {
	n, err := w.w.Write(b)
	w.h.Write(b[:n])
	w.off += int64(n)
	if err != nil {
		return fmt.Errorf("pack: write: %w", err)
	}
	return nil
}

// Add appends object (k, data) with id id. It checks that data hashes to
// id, so a damaged store object never reaches a pack.
func (w *Writer) Add(id objstore.ID, k objstore.Kind, data []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("pack: Add after Close")
	}
	if !knownKind(k) {
		return fmt.Errorf("pack: object %s has unknown kind %d", id.Short(), k)
	}
	if len(data) > MaxObject {
		return fmt.Errorf("pack: object %s is %d bytes, more than the %d a pack allows", id.Short(), len(data), MaxObject)
	}
	if objstore.Sum(k, data) != id {
		return fmt.Errorf("%w: %s (%s) does not hash to its id", objstore.ErrCorrupt, id.Short(), k)
	}
	if w.inChunk > 0 && len(w.chunk)+entryHead+len(data) > ChunkSize {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.chunk = append(w.chunk, byte(k))
	w.chunk = append(w.chunk, id[:]...)
	w.chunk = binary.BigEndian.AppendUint32(w.chunk, uint32(len(data)))
	w.chunk = append(w.chunk, data...)
	w.inChunk++
	w.count++
	w.raw += uint64(len(data))
	return nil
}

// wait waits for the chunk in flight, if any, and records its error.
func (w *Writer) wait() error {
	if w.pending != nil {
		if err := <-w.pending; err != nil && w.err == nil {
			w.err = err
		}
		w.pending = nil
	}
	return w.err
}

// flush hands the open chunk to a goroutine that compresses and writes it,
// after the previous one is written.
func (w *Writer) flush() error {
	if err := w.wait(); err != nil {
		return err
	}
	if w.inChunk == 0 {
		return nil
	}
	chunk, n := w.chunk, w.inChunk
	w.chunk, w.spare = w.spare[:0], nil
	w.inChunk = 0
	w.pending = make(chan error, 1)
	go func() {
		w.z = w.enc.EncodeAll(chunk, w.z[:0])
		var hd [chunkHead]byte
		hd[0] = tagChunk
		binary.BigEndian.PutUint32(hd[1:], n)
		binary.BigEndian.PutUint32(hd[5:], uint32(len(chunk)))
		binary.BigEndian.PutUint32(hd[9:], uint32(len(w.z)))
		err := w.write(hd[:])
		if err == nil {
			err = w.write(w.z)
		}
		w.spare = chunk
		w.pending <- err
	}()
	return nil
}

// Close writes the last chunk, the end marker and the trailer checksum.
// It fails if the header declared a count other than the number added.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	defer w.enc.Close()
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.wait(); err != nil {
		return err
	}
	if w.declared != Streamed && w.declared != w.count {
		w.err = fmt.Errorf("pack: header declared %d objects, %d were added", w.declared, w.count)
		return w.err
	}
	var end [9]byte
	end[0] = tagEnd
	binary.BigEndian.PutUint64(end[1:], w.count)
	if err := w.write(end[:]); err != nil {
		w.err = err
		return err
	}
	if err := w.write(w.h.Sum(nil)); err != nil {
		w.err = err
	}
	return w.err
}

// Abort stops a Writer without finishing the pack: it waits for the chunk
// in flight so that nothing is written to the underlying io.Writer after
// it returns. What was written is not a valid pack.
func (w *Writer) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	w.wait()
	w.enc.Close()
	if w.err == nil {
		w.err = errors.New("pack: writer aborted")
	}
}

// Count is the number of objects added so far.
func (w *Writer) Count() uint64 { return w.count }

// RawBytes is the total of the added objects' canonical sizes.
func (w *Writer) RawBytes() uint64 { return w.raw }

// Size is the number of pack bytes written; exact after Close.
func (w *Writer) Size() int64 {
	w.wait()
	return w.off
}

// Reader reads a pack as a stream, in memory bounded by MaxChunk whatever
// the pack's size. Every object's hash is checked as it is returned; the
// trailer checksum, the object count and the absence of trailing bytes are
// checked before Next reports io.EOF, so io.EOF means the whole pack is
// valid. Any other error is final and, for bad input, a *FormatError.
type Reader struct {
	br       *bufio.Reader
	h        hash.Hash
	off      int64 // bytes consumed
	hdr      Header
	dec      *zstd.Decoder
	z        []byte
	chunk    []byte
	pos      int
	left     uint32
	chunkOff int64
	entry    uint64
	raw      uint64
	err      error // sticky
}

// NewReader reads and checks the header of the pack in r.
func NewReader(r io.Reader) (*Reader, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxChunk))
	if err != nil {
		return nil, fmt.Errorf("pack: zstd: %w", err)
	}
	pr := &Reader{br: bufio.NewReaderSize(r, 256<<10), h: sha256.New(), dec: dec}
	if err := pr.readHeader(); err != nil {
		dec.Close()
		return nil, err
	}
	return pr, nil
}

func (r *Reader) fail(off int64, entry uint64, format string, args ...any) error {
	r.err = &FormatError{Offset: off, Entry: entry, Reason: fmt.Sprintf(format, args...)}
	return r.err
}

// read fills b from the pack, hashing what it consumes.
func (r *Reader) read(b []byte, what string) error {
	start := r.off
	n, err := io.ReadFull(r.br, b)
	r.h.Write(b[:n])
	r.off += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return r.fail(start, 0, "truncated: the pack ends at byte %d while reading %s", r.off, what)
		}
		r.err = fmt.Errorf("pack: read %s at byte %d: %w", what, start, err)
		return r.err
	}
	return nil
}

func (r *Reader) readHeader() error {
	var b [headerSize]byte
	if err := r.read(b[:len(Magic)], "the magic"); err != nil {
		return err
	}
	if string(b[:len(Magic)]) != Magic {
		return r.fail(0, 0, "not a folio pack: magic is %q, want %q", b[:len(Magic)], Magic)
	}
	if err := r.read(b[len(Magic):], "the header"); err != nil {
		return err
	}
	r.hdr.Version = binary.BigEndian.Uint16(b[8:])
	if r.hdr.Version != FormatVersion {
		return r.fail(8, 0, "format version %d, this folio reads version %d", r.hdr.Version, FormatVersion)
	}
	if flags := binary.BigEndian.Uint16(b[10:]); flags != 0 {
		return r.fail(10, 0, "unknown header flags %#04x", flags)
	}
	r.hdr.Count = binary.BigEndian.Uint64(b[12:])
	n := binary.BigEndian.Uint32(b[20:])
	if n > MaxRefs {
		return r.fail(20, 0, "header claims %d refs, at most %d allowed", n, MaxRefs)
	}
	var name [MaxRefName]byte
	for i := uint32(0); i < n; i++ {
		start := r.off
		if start-headerSize > MaxRefBytes {
			return r.fail(start, 0, "the header's refs take more than %d bytes", MaxRefBytes)
		}
		var l [2]byte
		if err := r.read(l[:], "a ref name length"); err != nil {
			return err
		}
		nl := int(binary.BigEndian.Uint16(l[:]))
		if nl == 0 || nl > MaxRefName {
			return r.fail(start, 0, "ref %d: name length %d out of range 1..%d", i+1, nl, MaxRefName)
		}
		if err := r.read(name[:nl], "a ref name"); err != nil {
			return err
		}
		var ref Ref
		ref.Name = string(name[:nl])
		if err := r.read(ref.ID[:], "a ref id"); err != nil {
			return err
		}
		if k := len(r.hdr.Refs); k > 0 && r.hdr.Refs[k-1].Name >= ref.Name {
			return r.fail(start, 0, "ref %q is out of order or repeated", ref.Name)
		}
		r.hdr.Refs = append(r.hdr.Refs, ref)
		if err := checkRefs(r.hdr.Refs[len(r.hdr.Refs)-1:]); err != nil {
			return r.fail(start, 0, "%v", err)
		}
	}
	return nil
}

// Header returns the pack's header.
func (r *Reader) Header() Header { return r.hdr }

// Offset is the number of pack bytes consumed so far.
func (r *Reader) Offset() int64 { return r.off }

// Count is the number of entries returned so far.
func (r *Reader) Count() uint64 { return r.entry }

// RawBytes is the total canonical size of the entries returned so far.
func (r *Reader) RawBytes() uint64 { return r.raw }

// Close releases the decoder. It does not close the underlying reader.
func (r *Reader) Close() { r.dec.Close() }

// Next returns the next object, or io.EOF after the trailer was verified.
func (r *Reader) Next() (Entry, error) {
	if r.err != nil {
		return Entry{}, r.err
	}
	for r.left == 0 {
		if err := r.nextChunk(); err != nil {
			return Entry{}, err
		}
	}
	r.entry++
	if len(r.chunk)-r.pos < entryHead {
		return Entry{}, r.fail(r.chunkOff, r.entry, "chunk ends inside an entry header")
	}
	var e Entry
	e.Kind = objstore.Kind(r.chunk[r.pos])
	copy(e.ID[:], r.chunk[r.pos+1:])
	n := binary.BigEndian.Uint32(r.chunk[r.pos+33:])
	r.pos += entryHead
	if !knownKind(e.Kind) {
		return Entry{}, r.fail(r.chunkOff, r.entry, "unknown object kind %d", e.Kind)
	}
	if n > MaxObject || int(n) > len(r.chunk)-r.pos {
		return Entry{}, r.fail(r.chunkOff, r.entry, "object length %d runs past its chunk", n)
	}
	e.Data = r.chunk[r.pos : r.pos+int(n) : r.pos+int(n)]
	r.pos += int(n)
	r.left--
	if r.left == 0 && r.pos != len(r.chunk) {
		return Entry{}, r.fail(r.chunkOff, r.entry, "%d unexplained bytes after the chunk's last entry", len(r.chunk)-r.pos)
	}
	if got := objstore.Sum(e.Kind, e.Data); got != e.ID {
		return Entry{}, r.fail(r.chunkOff, r.entry, "%s %s does not hash to its id (hashes to %s)", e.Kind, e.ID.Short(), got.Short())
	}
	r.raw += uint64(n)
	return e, nil
}

// nextChunk reads the next chunk, or the end marker and trailer (io.EOF).
func (r *Reader) nextChunk() error {
	start := r.off
	var tag [1]byte
	if err := r.read(tag[:], "a chunk or the end marker"); err != nil {
		return err
	}
	switch tag[0] {
	case tagChunk:
	case tagEnd:
		return r.readTrailer(start)
	default:
		return r.fail(start, 0, "expected a chunk ('C') or the end marker ('E'), found byte %#02x", tag[0])
	}
	var hd [chunkHead - 1]byte
	if err := r.read(hd[:], "a chunk header"); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(hd[0:])
	ulen := binary.BigEndian.Uint32(hd[4:])
	zlen := binary.BigEndian.Uint32(hd[8:])
	if n == 0 || ulen > MaxChunk || zlen > MaxChunk+MaxChunk/64 || uint64(n)*entryHead > uint64(ulen) {
		return r.fail(start, 0, "chunk header out of range (%d entries, %d bytes, %d compressed)", n, ulen, zlen)
	}
	// zlen is a claim: read the data into a buffer that grows as it
	// arrives (doubling), so a header promising 64 MiB before a truncated
	// pack costs what the pack holds, not what it promised.
	r.z = r.z[:0]
	for uint32(len(r.z)) < zlen {
		step := min(int(zlen)-len(r.z), max(len(r.z), 64<<10))
		r.z = slices.Grow(r.z, step)[:len(r.z)+step]
		if err := r.read(r.z[len(r.z)-step:], "a chunk's compressed data"); err != nil {
			return err
		}
	}
	var zh zstd.Header
	if err := zh.Decode(r.z); err != nil {
		return r.fail(start, r.entry+1, "chunk does not decompress: %v", err)
	}
	if zh.HasFCS && zh.FrameContentSize != uint64(ulen) {
		return r.fail(start, r.entry+1, "chunk's zstd frame claims %d bytes, header says %d", zh.FrameContentSize, ulen)
	}
	out, err := r.dec.DecodeAll(r.z, r.chunk[:0])
	if err != nil {
		return r.fail(start, r.entry+1, "chunk does not decompress: %v", err)
	}
	if len(out) != int(ulen) {
		return r.fail(start, r.entry+1, "chunk decompresses to %d bytes, header says %d", len(out), ulen)
	}
	r.chunk, r.pos, r.left, r.chunkOff = out, 0, n, start
	return nil
}

func (r *Reader) readTrailer(start int64) error {
	var c [8]byte
	if err := r.read(c[:], "the object count"); err != nil {
		return err
	}
	want := r.h.Sum(nil)
	var sum [sumSize]byte
	sumOff := r.off
	if _, err := io.ReadFull(r.br, sum[:]); err != nil {
		r.off += int64(sumSize) // approximate; only used for the message
		return r.fail(sumOff, 0, "truncated: the pack ends inside its trailer checksum")
	}
	r.off += sumSize
	if !bytes.Equal(sum[:], want) {
		return r.fail(sumOff, 0, "trailer checksum mismatch: the pack was altered or damaged")
	}
	count := binary.BigEndian.Uint64(c[:])
	if count != r.entry {
		return r.fail(start, 0, "trailer counts %d objects, the pack holds %d", count, r.entry)
	}
	if r.hdr.Count != Streamed && r.hdr.Count != count {
		return r.fail(12, 0, "header declares %d objects, the pack holds %d", r.hdr.Count, count)
	}
	if _, err := r.br.ReadByte(); err != io.EOF {
		if err == nil {
			return r.fail(r.off, 0, "unexpected data after the trailer")
		}
		r.err = fmt.Errorf("pack: read after trailer: %w", err)
		return r.err
	}
	r.err = io.EOF
	return io.EOF
}
