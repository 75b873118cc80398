package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// timeKeys are the members that hold a time in the records the CLI prints
// as JSON. The stores and the HTTP API keep times as Unix milliseconds
// (docs/api.md); the CLI prints every one of them as RFC 3339 in UTC,
// the one time format of its output (docs/cli.md).
var timeKeys = map[string]bool{
	"time": true, "created": true, "updated": true, "started": true, "finished": true, "decided": true,
	"revoked": true, "published": true, "lastChange": true, "unsealedSince": true, "sourceTime": true,
	"run_at": true, "runAt": true, "lease_until": true, "at": true, "expires": true, "deleted": true,
}

// minTimeMs is the smallest value read as a time (2001-09-09): below it a
// number under one of the timeKeys is not Unix milliseconds.
const minTimeMs = 1_000_000_000_000

// rfc3339Times rewrites, in the JSON value data, every integer member named
// in timeKeys that holds Unix milliseconds as an RFC 3339 UTC string (and
// an RFC 3339 string there, such as time.Time's, to the second in UTC),
// keeping the order of members and everything else as it is. Output is
// compact; printJSON indents it.
func rfc3339Times(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out bytes.Buffer
	// Per open container: whether it is an object, whether the next
	// token there is a key, and whether a member was written.
	type level struct{ object, key, written bool }
	var stack []level
	pendingKey := ""
	sep := func() {
		if n := len(stack); n > 0 {
			l := &stack[n-1]
			if l.object && !l.key {
				out.WriteByte(':')
				return
			}
			if l.written {
				out.WriteByte(',')
			}
			l.written = true
		}
	}
	after := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].key = !stack[n-1].key
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				sep()
				out.WriteByte(byte(t))
				stack = append(stack, level{object: t == '{', key: true})
			default:
				out.WriteByte(byte(t))
				stack = stack[:len(stack)-1]
				after()
			}
			pendingKey = ""
			continue
		case string:
			isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].key
			sep()
			if tm, err := time.Parse(time.RFC3339Nano, t); err == nil && !isKey && timeKeys[pendingKey] {
				t = tm.UTC().Format(time.RFC3339) // to the second, in UTC, as the others
			}
			writeJSONString(&out, t)
			after()
			if isKey {
				pendingKey = t
				continue
			}
		case json.Number:
			sep()
			if ms, err := strconv.ParseInt(string(t), 10, 64); err == nil && timeKeys[pendingKey] && ms >= minTimeMs {
				writeJSONString(&out, time.UnixMilli(ms).UTC().Format(time.RFC3339))
			} else {
				out.WriteString(string(t))
			}
			after()
		case bool:
			sep()
			fmt.Fprint(&out, t)
			after()
		case nil:
			sep()
			out.WriteString("null")
			after()
		}
		pendingKey = ""
	}
	return out.Bytes(), nil
}

func writeJSONString(out *bytes.Buffer, s string) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	out.WriteString(strings.TrimSuffix(b.String(), "\n"))
}
