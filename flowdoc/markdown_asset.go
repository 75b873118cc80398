package flowdoc

// ImportOptions tune ImportMarkdownWith.
type ImportOptions struct {
	// Image, when set, is asked for the src of every image alone in a
	// paragraph whose destination is not already an allowed src (a
	// relative path such as "images/a.png"): it returns the src to use
	// instead (the folio-asset: URL of the file it stored), or "" to
	// leave the image as the importer treats a refused src (its alt text,
	// reported). It reports its own notes.
	Image func(src string) string
}

// imageSrc is src, or what ImportOptions.Image makes of it.
func (im *importer) imageSrc(src string) string {
	if im.images == nil || checkSource(src) == "" {
		return src
	}
	if s := im.images(src); s != "" {
		return s
	}
	return src
}
