package syncproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/bounded"
	"github.com/foliodev/folio/internal/errs"
	"github.com/vmihailenco/msgpack/v5"
)

// The subprotocols. A client offers one or both in
// Sec-WebSocket-Protocol; the server picks the first it supports.
const (
	SubprotocolMsgpack = "folio.v1.msgpack"
	SubprotocolJSON    = "folio.v1.json"
)

// Subprotocols lists the supported subprotocols in server preference order.
var Subprotocols = []string{SubprotocolMsgpack, SubprotocolJSON}

// maxIDLen bounds a request id.
const maxIDLen = 64

// DecodeError is a frame that could not be decoded. ID is the request id
// when it could be read, so that the error reply can carry it.
type DecodeError struct {
	ID   string
	Code Code // CodeBadMessage or CodeUnknownType
	Err  error
}

func (e *DecodeError) Error() string { return "syncproto: decode: " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }

// Codec turns messages into frame payloads and back. Implementations are
// safe for concurrent use.
type Codec interface {
	// Name is the subprotocol.
	Name() string
	// Binary reports whether frames are binary (else text).
	Binary() bool
	// Encode returns the payload of m with m's envelope type set by the
	// caller. Events are encoded as *Event.
	Encode(m Message) ([]byte, error)
	// Decode reads one payload. Protocol types decode into their struct;
	// any other type decodes into *Event (stream events) when
	// allowEvents, else it is a *DecodeError with CodeUnknownType. Every
	// failure is a *DecodeError.
	Decode(p []byte, allowEvents bool) (Message, error)
}

// CodecFor returns the codec of a subprotocol, or nil.
func CodecFor(subprotocol string) Codec {
	switch subprotocol {
	case SubprotocolMsgpack:
		return MsgpackCodec
	case SubprotocolJSON:
		return JSONCodec
	}
	return nil
}

// The codecs.
var (
	JSONCodec    Codec = jsonCodec{}
	MsgpackCodec Codec = msgpackCodec{}
)

type jsonCodec struct{}

func (jsonCodec) Name() string { return SubprotocolJSON }
func (jsonCodec) Binary() bool { return false }

func (jsonCodec) Encode(m Message) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("syncproto: encode %s: %w", m.Env().Type, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// jsonEvent decodes an event keeping its data raw.
type jsonEvent struct {
	Envelope
	Stream string          `json:"stream"`
	Cursor uint64          `json:"cursor"`
	Time   int64           `json:"time"`
	Data   json.RawMessage `json:"data,omitempty"`
}

func (jsonCodec) Decode(p []byte, allowEvents bool) (Message, error) {
	// encoding/json keeps the last of two members and turns invalid text
	// into U+FFFD; refuse both first, as the HTTP API does, with the same
	// error (code invalid) naming the paths.
	var ve *flowdoc.ValidationError
	if err := flowdoc.CheckJSON(p); errors.As(err, &ve) && !notJSON(ve) {
		return nil, &DecodeError{Code: CodeBadMessage, ID: peekJSONID(p), Err: invalidRequest(ve)}
	}
	if !utf8.Valid(p) {
		return nil, &DecodeError{Code: CodeBadMessage, Err: errors.New("frame is not valid UTF-8 JSON")}
	}
	var env Envelope
	if err := bounded.UnmarshalJSONExact(p, &env); err != nil {
		var ce *bounded.CaseError
		if errors.As(err, &ce) {
			return nil, &DecodeError{Code: CodeBadMessage, ID: peekJSONID(p), Err: errs.E(errs.Invalid, "%v", ce)}
		}
		return nil, &DecodeError{Code: CodeBadMessage, ID: peekJSONID(p), Err: fmt.Errorf("not a message object: %v", err)}
	}
	if err := checkEnvelope(env); err != nil {
		return nil, err
	}
	m, ok := newMessage(env.Type)
	if !ok {
		if !allowEvents {
			return nil, &DecodeError{Code: CodeUnknownType, ID: env.ID, Err: fmt.Errorf("unknown message type %q", env.Type)}
		}
		var je jsonEvent
		if err := bounded.UnmarshalJSON(p, &je); err != nil {
			return nil, &DecodeError{Code: CodeBadMessage, ID: env.ID, Err: fmt.Errorf("%s: %v", env.Type, err)}
		}
		return &Event{Envelope: je.Envelope, Stream: je.Stream, Cursor: je.Cursor, Time: je.Time,
			Data: nil, raw: je.Data, codec: JSONCodec}, nil
	}
	strict := strictDecode(env.Type)
	if err := jsonDecode(p, m, strict); err != nil {
		var ce *bounded.CaseError
		if errors.As(err, &ce) {
			// encoding/json would decode "Marks" into marks: refused in
			// every message, as HTTP and MessagePack do, nothing stored.
			return nil, &DecodeError{Code: CodeBadMessage, ID: env.ID, Err: errs.E(errs.Invalid,
				"%s: %v; nothing was stored", env.Type, ce)}
		}
		return nil, decodeFailure(env, err, strict && jsonDecode(p, m, false) == nil,
			"in folio.v1.json a body and its blocks use the keys schemaVersion, blocks, id, type, attrs, richText, …")
	}
	return m, nil
}

// jsonDecode decodes p into v, bounded (package bounded), matching member
// names exactly, case included; strict also refuses members v has no
// field for, at any depth.
func jsonDecode(p []byte, v any, strict bool) error {
	if strict {
		return bounded.UnmarshalJSONStrict(p, v)
	}
	return bounded.UnmarshalJSONExact(p, v)
}

// decodeFailure is the error of a frame whose envelope decoded but whose
// message did not. A draft.save is decoded strictly: a field the save does
// not have (a body or block written with the other codec's keys, a typo)
// would otherwise be dropped, and a body without its blocks saved as an
// empty one. So is an assist.request (strictDecode), whose misspelt
// preset would otherwise run without it. unknownField says the frame decodes once unknown fields are
// allowed: it is refused as invalid, naming the field and, in keys, the
// codec's names for documents, and nothing is stored.
func decodeFailure(env Envelope, err error, unknownField bool, keys string) error {
	if unknownField {
		return &DecodeError{Code: CodeBadMessage, ID: env.ID, Err: errs.E(errs.Invalid,
			"%s: %v: a %s carries only the fields docs/protocol.md lists (%s); nothing was stored", env.Type, err, env.Type, keys)}
	}
	return &DecodeError{Code: CodeBadMessage, ID: env.ID, Err: fmt.Errorf("%s: %v", env.Type, err)}
}

// notJSON reports a frame that is no JSON value at all (as opposed to
// JSON with duplicate members or bad text).
func notJSON(ve *flowdoc.ValidationError) bool {
	for _, p := range ve.Problems {
		if strings.HasPrefix(p.Rule, "not JSON") || strings.HasPrefix(p.Rule, "unexpected data") {
			return true
		}
	}
	return false
}

// peekJSONID recovers a string "id" from an object whose other fields
// are broken, so that the error reply can still name the request: it
// reads the top-level members in order, token by token, and stops at the
// first "id". A frame broken before its "id" (or whose "id" is no string
// of at most 64 bytes) has none; one broken after it — truncated, nested
// too deep, a bad literal — still has it, as MessagePack frames do.
func peekJSONID(p []byte) string {
	dec := json.NewDecoder(bytes.NewReader(p))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return ""
		}
		if key == "id" {
			t, err := dec.Token()
			id, ok := t.(string)
			if err != nil || !ok || len(id) > maxIDLen {
				return ""
			}
			return id
		}
		if !skipJSONValue(dec) {
			return ""
		}
	}
	return ""
}

// skipJSONValue reads one value's tokens; false when the text breaks.
func skipJSONValue(dec *json.Decoder) bool {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return true
		}
	}
}

func checkEnvelope(env Envelope) error {
	if env.Type == "" {
		return &DecodeError{Code: CodeBadMessage, ID: clipID(env.ID), Err: errors.New(`message has no "type"`)}
	}
	if len(env.ID) > maxIDLen {
		return &DecodeError{Code: CodeBadMessage, Err: fmt.Errorf("id is %d bytes; at most %d", len(env.ID), maxIDLen)}
	}
	return nil
}

func clipID(id string) string {
	if len(id) > maxIDLen {
		return ""
	}
	return id
}

type msgpackCodec struct{}

func (msgpackCodec) Name() string { return SubprotocolMsgpack }
func (msgpackCodec) Binary() bool { return true }

func (msgpackCodec) Encode(m Message) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(&buf)
	enc.SetCustomStructTag("json")
	enc.UseCompactInts(true)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("syncproto: encode %s: %w", m.Env().Type, err)
	}
	return buf.Bytes(), nil
}

// msgpackEvent decodes an event keeping its data raw.
type msgpackEvent struct {
	Envelope
	Stream string             `json:"stream"`
	Cursor uint64             `json:"cursor"`
	Time   int64              `json:"time"`
	Data   msgpack.RawMessage `json:"data,omitempty"`
}

// msgpackUnmarshal decodes one frame payload (or event data) into v,
// bounded: every declared length is checked against the bytes that remain
// before anything is allocated, and the memory the decode takes is bounded
// by len(p) (package bounded, docs/protocol.md).
func msgpackUnmarshal(p []byte, v any) error { return msgpackDecode(p, v, false) }

// msgpackDecode is msgpackUnmarshal; strict refuses map keys v has no
// field for, at any depth.
func msgpackDecode(p []byte, v any, strict bool) error {
	if strict {
		return bounded.UnmarshalTagStrict(p, v, "json")
	}
	return bounded.UnmarshalTag(p, v, "json")
}

func (msgpackCodec) Decode(p []byte, allowEvents bool) (Message, error) {
	if m := msgpackDecodeFast(p, allowEvents); m != nil {
		return m, nil
	}
	return msgpackDecodeFull(p, allowEvents)
}

// msgpackDecodeFull decodes the envelope, checks it, then the message;
// each failure names what is wrong.
func msgpackDecodeFull(p []byte, allowEvents bool) (Message, error) {
	var env Envelope
	if err := msgpackUnmarshal(p, &env); err != nil {
		return nil, &DecodeError{Code: CodeBadMessage, ID: peekMsgpackID(p), Err: fmt.Errorf("not a message map: %v", err)}
	}
	if err := checkEnvelope(env); err != nil {
		return nil, err
	}
	m, ok := newMessage(env.Type)
	if !ok {
		if !allowEvents {
			return nil, &DecodeError{Code: CodeUnknownType, ID: env.ID, Err: fmt.Errorf("unknown message type %q", env.Type)}
		}
		var me msgpackEvent
		if err := msgpackUnmarshal(p, &me); err != nil {
			return nil, &DecodeError{Code: CodeBadMessage, ID: env.ID, Err: fmt.Errorf("%s: %v", env.Type, err)}
		}
		return &Event{Envelope: me.Envelope, Stream: me.Stream, Cursor: me.Cursor, Time: me.Time,
			raw: me.Data, codec: MsgpackCodec}, nil
	}
	strict := strictDecode(env.Type)
	if err := msgpackDecode(p, m, strict); err != nil {
		return nil, decodeFailure(env, err, strict && msgpackDecode(p, m, false) == nil,
			"in folio.v1.msgpack a body and its blocks use the canonical keys v, b, id, t, a, r, …")
	}
	return m, nil
}

// msgpackDecodeFast decodes a well-formed frame in one pass: its type is
// read without decoding anything (bounded.MapString), then the frame is
// decoded straight into that message. It returns nil for anything else,
// and Decode then takes the longer way (the envelope first), which names
// what is wrong.
func msgpackDecodeFast(p []byte, allowEvents bool) Message {
	typ, ok := bounded.MapString(p, "type", maxIDLen)
	if !ok || typ == "" {
		return nil
	}
	m, known := newMessage(typ)
	if !known {
		if !allowEvents {
			return nil
		}
		return msgpackEventFast(p, typ)
	}
	if msgpackDecode(p, m, strictDecode(typ)) != nil || m.Env().Type != typ || checkEnvelope(*m.Env()) != nil {
		return nil
	}
	return m
}

// msgpackEventFast decodes an event (what a client receives most) by hand,
// in one walk that checks the frame as every decode does and copies only
// the event's data: the fields of an event in the forms this package
// encodes them (strings, non-negative cursor, integer time), each once.
// It returns nil for anything else, which the reflective decoding then
// decodes or refuses.
func msgpackEventFast(p []byte, typ string) Message {
	if len(p) > 1<<24 { // the reflective decoding's memory bound (bounded.Budget) could refuse it
		return nil
	}
	e := &Event{codec: MsgpackCodec}
	var seen uint8
	ok := true
	err := bounded.MapEntries(p, func(key, val []byte) bool {
		var bit uint8
		switch string(key) {
		case "type":
			bit = 1
			e.Type, ok = bounded.String(val)
		case "id":
			bit = 2
			e.ID, ok = bounded.String(val)
		case "stream":
			bit = 4
			e.Stream, ok = bounded.String(val)
		case "cursor":
			bit = 8
			e.Cursor, ok = bounded.Uint(val)
		case "time":
			bit = 16
			e.Time, ok = bounded.Int(val)
		case "data":
			bit = 32
			if len(val) == 1 && val[0] == 0xc0 {
				e.raw = nil // nil decodes as no data
			} else {
				e.raw = bytes.Clone(val)
			}
		default:
			return true // a field a newer server adds
		}
		if seen&bit != 0 {
			ok = false // twice: left to the reflective decoding
		}
		seen |= bit
		return ok
	})
	if err != nil || !ok || e.Type != typ || checkEnvelope(e.Envelope) != nil {
		return nil
	}
	return e
}

// peekMsgpackID recovers the string "id" of a map whose other entries are
// broken by scanning its entries up to the first it cannot read; nothing
// of the frame is decoded.
func peekMsgpackID(p []byte) string {
	id, _ := bounded.MapString(p, "id", maxIDLen)
	return id
}

// DecodeData decodes the data of an event received by a client into v
// (for example *DraftUpdated or *VersionInfo).
func (e *Event) DecodeData(v any) error {
	switch {
	case e.raw == nil && e.Data == nil:
		return fmt.Errorf("syncproto: %s event has no data", e.Type)
	case e.raw == nil:
		// An event built in this process: round-trip through JSON.
		b, err := json.Marshal(e.Data)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, v)
	case e.codec == MsgpackCodec:
		return msgpackUnmarshal(e.raw, v)
	default:
		return bounded.UnmarshalJSON(e.raw, v)
	}
}
