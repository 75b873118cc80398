package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sync"
)

// MaxDepth bounds the nesting of a JSON-RPC message (objects and arrays):
// deeper ones are refused before the SDK decodes them. A FlowDocument
// nests far less (docs/flowdoc.md, "Nesting and limits").
const MaxDepth = 128

// guardedIO sits between stdin/stdout and the SDK's stdio transport: a
// line over MaxMessage or nested deeper than MaxDepth is answered with a
// JSON-RPC error (code -32600, the request's id when it can be read) and
// dropped, so the connection and the memory it holds survive bad input.
// At most MaxMessage bytes of a line are held.
type guardedIO struct {
	src *bufio.Reader
	out *lockedWriter
	buf []byte // the rest of an accepted line, for the SDK to read
	acc []byte // reused to collect small lines
}

type lockedWriter struct {
	mu sync.Mutex // one message per Write
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

func (g *guardedIO) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		line, long, err := g.line()
		if len(line) > 0 {
			switch {
			case long:
				g.refuse(line, fmt.Sprintf("message over %d bytes: send less (propose smaller changes)", MaxMessage))
			case depth(line) > MaxDepth:
				g.refuse(line, fmt.Sprintf("message nested deeper than %d levels", MaxDepth))
			default:
				g.buf = line
			}
		}
		if err != nil && len(g.buf) == 0 {
			return 0, err
		}
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

func (g *guardedIO) Close() error { return nil }

// line reads one line (with its newline). A line over MaxMessage is
// returned cut to its first KiB with long set; the rest is discarded.
func (g *guardedIO) line() ([]byte, bool, error) {
	out := g.acc[:0]
	defer func() {
		if cap(out) <= 64<<10 {
			g.acc = out // keep a small buffer; a large one goes
		}
	}()
	long := false
	for {
		chunk, err := g.src.ReadSlice('\n')
		switch {
		case long:
		case len(out)+len(chunk) > MaxMessage:
			long = true
			out = append(out, chunk[:min(len(chunk), max(0, 1024-len(out)))]...)
		default:
			if need := len(out) + len(chunk); need > cap(out) {
				// Double (append grows large slices by a quarter, which
				// would allocate several times the line on the way).
				grown := make([]byte, len(out), min(max(2*cap(out), need), MaxMessage))
				copy(grown, out)
				out = grown
			}
			out = append(out, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return out, long, err
	}
}

var idRE = regexp.MustCompile(`"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?[0-9]{1,20})`)

// refuse answers a dropped line with an invalid-request error.
func (g *guardedIO) refuse(line []byte, why string) {
	id := json.RawMessage("null")
	if m := idRE.FindSubmatch(line[:min(len(line), 1024)]); m != nil {
		id = m[1]
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32600, "message": why}})
	_, _ = g.out.Write(append(msg, '\n'))
}

// depth returns the deepest nesting of objects and arrays in data,
// outside strings.
func depth(data []byte) int {
	d, most, inStr, esc := 0, 0, false, false
	for _, c := range data {
		switch {
		case esc:
			esc = false
		case inStr:
			if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}
