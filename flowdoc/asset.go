package flowdoc

import "strings"

// AssetScheme starts an asset URL: "folio-asset:" and the 64 lowercase
// hex digits of an asset object's id (docs/flowdoc.md, "Links and URLs").
// It names an image or file in the document's own store, so it is valid
// exactly where a block shows or offers a resource of its own: the src of
// media and file blocks. Links, bookmarks and embeds point elsewhere and
// refuse it.
const AssetScheme = "folio-asset:"

// AssetURL is the asset URL of the asset with the given hex id.
func AssetURL(hash string) string { return AssetScheme + hash }

// ParseAssetURL returns the hex id an asset URL names, and whether s is
// one (exactly the scheme in lower case and 64 lowercase hex digits).
func ParseAssetURL(s string) (string, bool) {
	h, ok := strings.CutPrefix(s, AssetScheme)
	if !ok || len(h) != 64 {
		return "", false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", false
		}
	}
	return h, true
}

// isAssetScheme reports whether s starts with the asset scheme in any
// case (the policy names the problem rather than calling it a scheme it
// does not know).
func isAssetScheme(s string) bool {
	return len(s) >= len(AssetScheme) && strings.EqualFold(s[:len(AssetScheme)], AssetScheme)
}

// checkSource returns the rule the src of a media block breaks, or "":
// an asset URL, or a media URL (absolute or relative, checkMediaSrc).
func checkSource(s string) string {
	if isAssetScheme(s) {
		return checkFileSource(s)
	}
	return checkMediaSrc(s)
}

// checkFileSource returns the rule the src of a file block breaks, or "":
// an asset URL, or a resource URL (absolute only).
func checkFileSource(s string) string {
	if isAssetScheme(s) {
		if _, ok := ParseAssetURL(s); !ok {
			return "asset URL must be folio-asset: followed by 64 lowercase hex digits"
		}
		return ""
	}
	return checkResource(s)
}

// source is v.resource for the src of media and file blocks; check is
// checkSource or checkFileSource.
func (v *validator) source(u, path, missing string, check func(string) string) {
	if u == "" {
		v.add(path, missing)
		return
	}
	if rule := check(u); rule != "" {
		v.add(path, rule)
	}
}

// notAsset is the rule a link, bookmark or embed URL naming an asset
// breaks, or "".
func notAsset(s string) string {
	if isAssetScheme(s) {
		return "folio-asset URLs are allowed only as the src of media and file blocks"
	}
	return ""
}

// AssetRefs returns the hex ids of the assets b references (the src of
// its media and file blocks, nested ones included), each once, in order.
func AssetRefs(b *Block) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(b *Block)
	walk = func(b *Block) {
		if b.Attrs != nil && (b.Type == Media || b.Type == File) {
			if h, ok := ParseAssetURL(b.Attrs.Src); ok && !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
		for _, l := range b.Nested() {
			for i := range *l {
				walk(&(*l)[i])
			}
		}
	}
	walk(b)
	return out
}

// DocAssetRefs is AssetRefs over every block of d, each id once.
func DocAssetRefs(d Document) []string {
	var out []string
	seen := map[string]bool{}
	for i := range d.Blocks {
		for _, h := range AssetRefs(&d.Blocks[i]) {
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	return out
}

// MapAssets returns d with the src of every media and file block that
// names an asset replaced by f(hex id) (the exports write relative file
// paths, the public site its /assets/ URLs). d is not modified; blocks
// without assets are shared with it.
func MapAssets(d Document, f func(hash string) string) Document {
	out := d
	out.Blocks = mapAssetBlocks(d.Blocks, f)
	return out
}

func mapAssetBlocks(bs []Block, f func(string) string) []Block {
	var out []Block
	for i := range bs {
		b := bs[i]
		if len(AssetRefs(&b)) == 0 {
			continue
		}
		if out == nil {
			out = append([]Block(nil), bs...)
		}
		if b.Attrs != nil && (b.Type == Media || b.Type == File) {
			if h, ok := ParseAssetURL(b.Attrs.Src); ok {
				a := *b.Attrs
				a.Src = f(h)
				b.Attrs = &a
			}
		}
		b.Children = mapAssetBlocks(b.Children, f)
		if len(b.Cols) > 0 {
			cols := append([]Column(nil), b.Cols...)
			for j := range cols {
				cols[j].Blocks = mapAssetBlocks(cols[j].Blocks, f)
			}
			b.Cols = cols
		}
		if len(b.Items) > 0 {
			b.Items = mapAssetItems(b.Items, f)
		}
		out[i] = b
	}
	if out == nil {
		return bs
	}
	return out
}

// mapAssetItems is mapAssetBlocks over the blocks of list items: a copy
// of items, sharing nothing it changes.
func mapAssetItems(items []ListItem, f func(hexID string) string) []ListItem {
	out := append([]ListItem(nil), items...)
	for i := range out {
		out[i].Blocks = mapAssetBlocks(out[i].Blocks, f)
		if len(out[i].Items) > 0 {
			out[i].Items = mapAssetItems(out[i].Items, f)
		}
	}
	return out
}
