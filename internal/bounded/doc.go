// Package bounded decodes msgpack and JSON that came from outside the
// process or from disk (wire frames, stored objects and records, pack
// entries) so that the memory a decode allocates is bounded by the size of
// its input, never by what the input claims.
//
// A msgpack value announces the length of every string, bin, ext, array
// and map before its content. A decoder that trusts such a length calls
// make with it: a 14-byte frame announcing an array of 2^32 elements is
// enough to end a process ("fatal error: runtime: out of memory", which no
// recover catches). Every decode of untrusted msgpack in Folio therefore
// goes through Unmarshal, which first walks the whole value without
// allocating and checks, for every token:
//
//   - each declared string, bin or ext length fits in the bytes that remain;
//   - each array of n elements has at least n bytes left and each map of n
//     entries at least 2n (every element is at least one byte), so no
//     count can exceed the input's size;
//   - arrays and maps nest at most MaxDepth deep;
//   - the value is exactly the input: nothing follows it.
//
// A count that passes can still amplify: an array of n one-byte elements
// (nil, {}) decoded into a slice of a 160-byte struct costs 160 bytes of
// memory per input byte. So the walk follows the target Go type alongside
// the data and adds up what decoding will allocate (for a slice of n
// elements, n × the element size twice, because the msgpack decoder makes
// the elements and then appends them; the bytes of every string; the
// pointee of every non-nil pointer; the entries of a map), and refuses the
// input when that exceeds AllocPerByte × len(input) + AllocBase, or
// MaxAlloc whatever the input's size. Keys a
// struct does not have are skipped by the decoder and cost nothing. The
// factor is set by the most compact valid data Folio has (an empty list
// item, one byte, costs 176 bytes), so no valid value is refused. A type with its own decoder
// (msgpack.CustomDecoder, encoding.BinaryUnmarshaler, ...) is charged
// CustomPerByte per byte of its value; such decoders (draft blocks, object
// ids, fingerprints) keep to that by checking their own lengths.
//
// Untrusted input is never decoded into interface{}: a target type that
// holds an interface (any, map[string]any, ...) is refused before
// decoding. Data whose shape the reader does not know is validated and
// passed on as bytes (Validate, AppendJSON); a request id is read from a
// broken frame by scanning (MapString), not by decoding it into a map.
//
// UnmarshalJSON applies the same accounting to JSON text (which declares
// no lengths, but amplifies alike: "{}," is three bytes and becomes a
// whole struct) before handing it to encoding/json.
//
// UnmarshalTagStrict and UnmarshalJSONStrict decode alike but refuse a key
// that no field of the target takes, at any depth, for a reader to whom a
// dropped key would lose data (a sync draft.save whose body uses the other
// codec's field names would otherwise save an empty body).
//
// The rules are specified for the stored formats in docs/objects.md and for
// the wire in docs/protocol.md.
package bounded
