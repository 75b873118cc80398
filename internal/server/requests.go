package server

import (
	"errors"
	"io"
	"net/http"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
)

// The bodies of the requests that carry documents are decoded by a
// streaming flowdoc.Reader straight into domain values, over the body that
// http.MaxBytesReader bounds: bytes, blocks, runs and changes are counted
// as they are read and decoding stops at the first limit passed, so a
// request's memory is bounded by the configured limits, not by its body.
// Decoding checks the JSON (strict UTF-8, no lone surrogates, no duplicate
// or unknown members, the right types); every rule about values is the
// content service's (package repo), as for the WebSocket and the CLI.

// saveBody is a decoded SaveRequest.
type saveBody struct {
	baseSeq uint64
	body    *flowdoc.Document
	align   bool
	merge   bool
	changes []repo.DraftChange
	attrs   *flowdoc.Attributes
	seal    string
	message string
	session string
}

// decodeRequest reads one JSON object from r's body with fields, then
// checks nothing follows it. An empty body is an error unless emptyOK.
func (s *Server) decodeRequest(r *http.Request, emptyOK bool, field func(rd *flowdoc.Reader, key, path string) (bool, error)) error {
	rd := flowdoc.NewReader(r.Body, s.content.RequestLimits().Decode())
	present, err := rd.Object("", "request", func(key, path string) (bool, error) {
		return field(rd, key, path)
	})
	if err == nil && !present {
		err = rd.Problem("$", "the request body must be a JSON object")
	}
	if err == nil {
		err = rd.End("the request")
	}
	if err == nil {
		return nil
	}
	var ve *flowdoc.ValidationError
	if errors.As(err, &ve) && len(ve.Problems) == 1 && ve.Problems[0].Rule == "not JSON: empty input" {
		if emptyOK {
			return nil // an empty body takes the defaults
		}
		return errs.E(errs.Invalid, "the request needs a JSON body")
	}
	return requestError(err)
}

// requestError gives a decoding error its kind: a body over the byte
// limit is too_large, one over a count limit too_many_*, a JSON problem
// invalid (naming each path), a body cut short by the client canceled,
// and one that could not be read (not in time: [server] read_timeout)
// invalid, as for every other body.
func requestError(err error) error {
	var le *flowdoc.LimitError
	var ve *flowdoc.ValidationError
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &le):
		return repo.LimitError(le)
	case errors.As(err, &mb):
		return tooLarge(mb)
	case errors.As(err, &ve):
		return repo.InvalidRequest(ve)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &errs.Error{Kind: errs.Canceled, Msg: "the request body ended early", Err: err}
	case errs.KindOf(err) != errs.Internal:
		return err
	}
	return errs.E(errs.Invalid, "request body: %w", err)
}

// decodeSave reads a SaveRequest, counting its changes against the limit.
func (s *Server) decodeSave(r *http.Request) (saveBody, error) {
	var sb saveBody
	maxChanges := s.content.RequestLimits().MaxChanges
	err := s.decodeRequest(r, false, func(rd *flowdoc.Reader, key, p string) (bool, error) {
		var err error
		switch key {
		case "baseSeq":
			sb.baseSeq, err = rd.Uint(p)
		case "body":
			sb.body, err = rd.Document(p)
		case "align":
			sb.align, err = rd.Bool(p)
		case "merge":
			sb.merge, err = rd.Bool(p)
		case "attrs":
			sb.attrs, err = rd.Attributes(p)
		case "seal":
			sb.seal, err = rd.String(p)
		case "message":
			sb.message, err = rd.String(p)
		case "session":
			sb.session, err = rd.String(p)
		case "changes":
			_, err = rd.Array(p, func(i int, cp string) error {
				if i >= maxChanges {
					return &flowdoc.LimitError{What: "changes", Limit: maxChanges}
				}
				c, ok, err := decodeChange(rd, cp)
				if ok {
					sb.changes = append(sb.changes, c)
				}
				return err
			})
		default:
			return false, nil
		}
		return true, err
	})
	return sb, err
}

// decodeChange reads one repo.DraftChange.
func decodeChange(rd *flowdoc.Reader, path string) (repo.DraftChange, bool, error) {
	var c repo.DraftChange
	ok, err := rd.Object(path, "change", func(key, p string) (bool, error) {
		var err error
		switch key {
		case "op":
			c.Op, err = rd.String(p)
		case "block":
			c.Block, err = rd.Block(p)
		case "blockId":
			c.BlockID, err = rd.String(p)
		case "after":
			// null is absent (the end); "" is the start.
			c.After, err = rd.OptString(p)
		default:
			return false, nil
		}
		return true, err
	})
	if err == nil && !ok {
		err = rd.Required(path, "change")
	}
	return c, ok, err
}

// createBody is a decoded CreateRequest.
type createBody struct {
	id, owner, message string
	attrs              flowdoc.Attributes
	body               *flowdoc.Document
}

func (s *Server) decodeCreate(r *http.Request) (createBody, error) {
	var cb createBody
	err := s.decodeRequest(r, false, func(rd *flowdoc.Reader, key, p string) (bool, error) {
		var err error
		switch key {
		case "id":
			cb.id, err = rd.String(p)
		case "owner":
			cb.owner, err = rd.String(p)
		case "message":
			cb.message, err = rd.String(p)
		case "body":
			cb.body, err = rd.Document(p)
		case "attrs":
			var a *flowdoc.Attributes
			if a, err = rd.Attributes(p); a != nil {
				cb.attrs = *a
			}
		default:
			return false, nil
		}
		return true, err
	})
	return cb, err
}

func (s *Server) decodeCheckpoint(r *http.Request) (CheckpointRequest, error) {
	var cr CheckpointRequest
	err := s.decodeRequest(r, true, func(rd *flowdoc.Reader, key, p string) (bool, error) {
		var err error
		switch key {
		case "reason":
			cr.Reason, err = rd.String(p)
		case "message":
			cr.Message, err = rd.String(p)
		default:
			return false, nil
		}
		return true, err
	})
	return cr, err
}

func (s *Server) decodeRestore(r *http.Request) (RestoreRequest, error) {
	var rr RestoreRequest
	err := s.decodeRequest(r, false, func(rd *flowdoc.Reader, key, p string) (bool, error) {
		var err error
		switch key {
		case "label":
			rr.Label, err = rd.String(p)
		case "block":
			rr.Block, err = rd.String(p)
		default:
			return false, nil
		}
		return true, err
	})
	return rr, err
}
