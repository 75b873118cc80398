package llm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Event is one dispatched Server-Sent Event.
type Event struct {
	// Type is the event field, "" for the default "message".
	Type string
	// Data is the data lines joined with "\n".
	Data string
	// ID is the last event id seen on the stream.
	ID string
	// Retry is the reconnection time in milliseconds, -1 when not sent.
	Retry int
}

// MaxLine bounds one SSE line; a longer line is a decoding error rather than
// unbounded memory.
const MaxLine = 1 << 20

// ErrLineTooLong is returned by Decoder.Next for a line over MaxLine bytes.
var ErrLineTooLong = errors.New("llm: sse line too long")

// Decoder reads Server-Sent Events as the HTML standard's event-stream
// format defines them:
//
//   - lines end with CRLF, LF or CR;
//   - a line starting with ':' is a comment (keep-alive) and is ignored;
//   - "field:value" sets a field; one space after the colon is dropped, so
//     "data:x" and "data: x" are the same; a line without a colon is a field
//     with an empty value;
//   - several data lines join with "\n";
//   - a blank line dispatches the event; an event without data is dropped;
//   - at end of input an undispatched event is discarded.
//
// Unknown fields are ignored. A Decoder is used by one goroutine.
type Decoder struct {
	sc     *bufio.Scanner
	id     string
	events int
}

// NewDecoder returns a decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	sc.Split(splitLines)
	return &Decoder{sc: sc}
}

// splitLines splits at CRLF, LF or lone CR.
func splitLines(data []byte, atEOF bool) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // a CR at the end of the buffer: wait for a possible LF
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// Next returns the next event. It returns io.EOF at the end of input
// (discarding an event not terminated by a blank line), ErrLineTooLong for
// an oversized line, or the reader's error.
func (d *Decoder) Next() (Event, error) {
	var (
		data    strings.Builder
		hasData bool
		typ     string
		retry   = -1
	)
	for d.sc.Scan() {
		line := d.sc.Bytes()
		if len(line) == 0 {
			if !hasData {
				typ, retry = "", -1
				continue
			}
			d.events++
			return Event{Type: typ, Data: data.String(), ID: d.id, Retry: retry}, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		case "event":
			typ = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				d.id = string(value)
			}
		case "retry":
			if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 && isDigits(value) {
				retry = n
			}
		}
	}
	if err := d.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Event{}, fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, MaxLine)
		}
		return Event{}, err
	}
	return Event{}, io.EOF
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}
