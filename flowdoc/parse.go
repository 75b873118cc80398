package flowdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Parse decodes a FlowDocument from JSON, strictly: the input must be one
// JSON object; unknown fields (field names match exactly, case included)
// and values of the wrong JSON type are problems naming their JSON path;
// schemaVersion must be 1 (missing or 0 reads as 1). null counts as absent.
// The error is a *ValidationError listing every such problem.
//
// Parse checks the encoding only; call Normalize (or Validate) on the
// result before trusting its content.
func Parse(data []byte) (Document, error) {
	return ParseLimited(data, DecodeLimits{})
}

// ParseLimited is Parse that stops with a *LimitError as soon as the
// document holds more blocks or runs than l allows (see Reader).
func ParseLimited(data []byte, l DecodeLimits) (Document, error) {
	r := NewReader(bytes.NewReader(data), l)
	d, err := r.Document("")
	if err != nil {
		return Document{}, err
	}
	if d == nil && len(r.ps) == 0 { // null
		if err := r.Problem("$", "document must be a JSON object"); err != nil {
			return Document{}, err
		}
	}
	if err := r.End("the document"); err != nil {
		return Document{}, err
	}
	if d == nil {
		return Document{}, invalid("$", "document must be a JSON object")
	}
	return *d, nil
}

// maxJSONDepth bounds the nesting of arrays and objects in a parsed
// document. The deepest valid FlowDocument (MaxDepth blocks, MaxListDepth
// items) stays far below it; the bound keeps the recursive reader
// from exhausting the stack on hostile input.
const maxJSONDepth = 100

func invalid(path, rule string) error {
	return &ValidationError{Problems: []Problem{{Path: path, Rule: rule}}}
}

func jsonErr(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (at byte %d)", err, se.Offset)
	}
	if errors.Is(err, io.EOF) {
		return "empty input"
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return err.Error()
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
