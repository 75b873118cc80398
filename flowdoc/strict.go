package flowdoc

import (
	"io"
	"unicode/utf8"
)

// strictText passes JSON text through while refusing what encoding/json
// would silently replace with U+FFFD: invalid UTF-8 anywhere, and string
// escapes that are half of a UTF-16 surrogate pair (\ud800 alone, or a
// low half first). It keeps its state across reads, so a sequence split
// between two reads is judged whole. Everything else about the syntax is
// left to the JSON decoder it feeds.
type strictText struct {
	r     io.Reader
	off   int64 // bytes passed on so far
	state uint8
	hex   int     // \u digits read
	code  rune    // value of the \u digits read
	low   bool    // the \u being read must be a low surrogate
	pend  [4]byte // a UTF-8 sequence not yet complete
	np    int
	err   error
}

// textError is an encoding problem at a byte offset of the input.
type textError struct {
	off int64
	msg string
}

// Error is the message alone: the offset differs between two carriers of
// the same value (an HTTP body, a WebSocket frame), the message must not.
func (e *textError) Error() string { return e.msg }

const (
	stOut    = iota // between strings
	stIn            // in a string
	stEsc           // after a backslash
	stHex           // in the 4 hex digits of \u
	stWantBS        // after a high surrogate escape: a backslash must follow
	stWantU         // ... then a u
)

func (s *strictText) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.r.Read(p)
	for i := 0; i < n; i++ {
		if e := s.step(p[i]); e != nil {
			s.err = e
			return i, e
		}
		s.off++
	}
	if err == io.EOF && s.np > 0 {
		s.err = &textError{s.off, "input is not valid UTF-8: it ends inside a character"}
		return n, s.err
	}
	return n, err
}

func (s *strictText) step(c byte) error {
	if s.np > 0 || c >= utf8.RuneSelf {
		s.pend[s.np] = c
		s.np++
		if !utf8.FullRune(s.pend[:s.np]) {
			return nil
		}
		r, size := utf8.DecodeRune(s.pend[:s.np])
		s.np = 0
		if r == utf8.RuneError && size <= 1 {
			return &textError{s.off, "input is not valid UTF-8"}
		}
		// A whole non-ASCII character: plain string content (outside a
		// string the JSON decoder refuses it).
		return s.other()
	}
	switch s.state {
	case stOut:
		if c == '"' {
			s.state = stIn
		}
	case stIn:
		switch c {
		case '"':
			s.state = stOut
		case '\\':
			s.state = stEsc
		}
	case stEsc:
		if c == 'u' {
			s.state, s.hex, s.code, s.low = stHex, 0, 0, false
		} else {
			s.state = stIn
		}
	case stHex:
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			s.state = stIn // not an escape: the JSON decoder reports it
			return nil
		}
		s.code = s.code<<4 | rune(d)
		if s.hex++; s.hex < 4 {
			return nil
		}
		switch {
		case s.low && (s.code < 0xdc00 || s.code > 0xdfff):
			return s.lone()
		case s.low:
			s.state = stIn
		case s.code >= 0xd800 && s.code <= 0xdbff:
			s.state = stWantBS
		case s.code >= 0xdc00 && s.code <= 0xdfff:
			return s.lone()
		default:
			s.state = stIn
		}
	case stWantBS:
		if c != '\\' {
			return s.lone()
		}
		s.state = stWantU
	case stWantU:
		if c != 'u' {
			return s.lone()
		}
		s.state, s.hex, s.code, s.low = stHex, 0, 0, true
	}
	return nil
}

// other handles a non-ASCII character.
func (s *strictText) other() error {
	switch s.state {
	case stWantBS, stWantU:
		return s.lone()
	case stEsc, stHex:
		s.state = stIn // a broken escape: the JSON decoder reports it
	}
	return nil
}

func (s *strictText) lone() error {
	return &textError{s.off, "a \\u escape is half of a UTF-16 surrogate pair (a lone surrogate is not a character)"}
}
