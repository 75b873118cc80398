package mcp

import (
	"context"
	"strings"

	"github.com/foliodev/folio/internal/errs"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResourcePrefix starts every resource URI: folio://doc/<id> is a
// document's head, folio://doc/<id>@<label> one of its versions, both as
// Markdown with block ids (read_document's text).
const ResourcePrefix = "folio://doc/"

func addResources(s *sdk.Server, b func(ctx context.Context, extra *sdk.RequestExtra) (Backend, error), fw *Forwarder) {
	h := func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		uri := req.Params.URI
		if fw != nil {
			return fw.read(ctx, req.Session, uri)
		}
		ref, ok := strings.CutPrefix(uri, ResourcePrefix)
		if !ok || ref == "" {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		doc, label, _ := strings.Cut(ref, "@")
		be, err := b(ctx, req.Extra)
		if err != nil {
			return nil, err
		}
		snap, err := be.Show(ctx, doc, label)
		if errs.KindOf(err) == errs.NotFound {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		if err != nil {
			return nil, err
		}
		_, text, err := readResult(doc, snap, "markdown")
		if err != nil {
			return nil, err
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}, nil
	}
	s.AddResourceTemplate(&sdk.ResourceTemplate{Name: "document", Title: "A Folio article (head)", URITemplate: ResourcePrefix + "{id}",
		Description: "The article's current head version as Markdown, each block headed by its id.", MIMEType: "text/markdown"}, h)
	s.AddResourceTemplate(&sdk.ResourceTemplate{Name: "version", Title: "A version of a Folio article", URITemplate: ResourcePrefix + "{id}@{label}",
		Description: "One version (e.g. v1.r2) of the article as Markdown, each block headed by its id.", MIMEType: "text/markdown"}, h)
}
