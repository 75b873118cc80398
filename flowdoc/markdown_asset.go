package flowdoc

import "net/url"

// ImportOptions tune ImportMarkdownWith.
type ImportOptions struct {
	// Image, when set, is asked for the src of every image alone in a
	// paragraph whose destination is a relative reference (no scheme, not
	// "//host": "images/a.png", "../x.png", "/abs.png"): it returns the
	// src to use instead (the folio-asset: URL of the file it stored), or
	// "" to leave the src as it is (then the importer treats it as any
	// other src: kept where the URL rules allow it, else the alt text,
	// reported). It reports its own notes.
	Image func(src string) string
}

// imageSrc is src, or what ImportOptions.Image makes of it.
func (im *importer) imageSrc(src string) string {
	if im.images == nil || !localRef(src) {
		return src
	}
	if s := im.images(src); s != "" {
		return s
	}
	return src
}

// localRef reports whether src is a relative reference that may name a
// file beside the Markdown: no scheme and no authority.
func localRef(src string) bool {
	if src == "" || len(src) >= 2 && src[:2] == "//" {
		return false
	}
	u, err := url.Parse(src)
	return err != nil || u.Scheme == ""
}
