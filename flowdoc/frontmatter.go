package flowdoc

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Article is a Markdown file read as an article: its body and the
// attributes its front matter (or its first heading) gives.
type Article struct {
	Body  Document
	Attrs Attributes
	// Set names the attributes the file gave ("title", "summary", "slug",
	// "category", "tags"), in that order: a save changes only those.
	Set []string
}

// UnsupportedFrontMatterKey is a front-matter key that is no article
// attribute (layout, date, draft …), or a line the reader does not
// understand: reported, its value kept nowhere.
const UnsupportedFrontMatterKey = "front-matter-key"

// ImportArticle reads a Markdown file as an article. Front matter opening
// the file (YAML between "---" lines, or TOML between "+++" lines) fills
// the attributes title, summary (also "description"), slug, category
// (also the first of "categories") and tags; every other key is reported
// as UnsupportedFrontMatterKey. With titleFromHeading and no title in
// the front matter, a level-1 heading that opens the body is the title
// and is then not kept in the body, so the title is shown once; any other
// first heading stays. The body is ImportMarkdown's for the rest of the
// file.
func ImportArticle(src []byte, titleFromHeading bool) (Article, []Unsupported, error) {
	return ImportArticleWith(src, titleFromHeading, ImportOptions{})
}

// ImportArticleWith is ImportArticle with import options (markdown_asset.go).
func ImportArticleWith(src []byte, titleFromHeading bool, o ImportOptions) (Article, []Unsupported, error) {
	var a Article
	var notes []Unsupported
	if m := frontMatterRE.FindSubmatchIndex(src); m != nil && (string(src[m[2]:m[3]]) == "+++") == (string(src[m[4]:m[5]]) == "+++") {
		body := src[m[3]:m[4]]
		if _, rest, ok := bytes.Cut(body, []byte("\n")); ok {
			body = rest // the rest of the opening line
		}
		if string(src[m[2]:m[3]]) == "+++" {
			notes = readTOMLFrontMatter(body, &a)
		} else {
			notes = readYAMLFrontMatter(body, 1, &a)
		}
		// Keep the line numbers of what follows true: blank lines stand
		// for the front matter.
		blank := bytes.Repeat([]byte("\n"), bytes.Count(src[:m[1]], []byte("\n")))
		src = append(blank, src[m[1]:]...)
	}
	d, un, err := ImportMarkdownWith(src, o)
	if err != nil {
		return Article{}, nil, err
	}
	if titleFromHeading && a.Attrs.Title == "" && len(d.Blocks) > 0 {
		if first := d.Blocks[0]; first.Type == Heading && first.Attrs != nil && first.Attrs.Level == 1 {
			if text := strings.TrimSpace(PlainText(first.RichText)); text != "" && !strings.Contains(text, "\n") {
				a.Attrs.Title = text
				a.Set = append(a.Set, "title")
				d.Blocks = d.Blocks[1:]
			}
		}
	}
	(&importer{}).renumber(d.Blocks) // b1, b2, … as ImportMarkdown numbers them
	a.Body = d
	a.Set = orderedSet(a.Set)
	notes = append(notes, un...)
	return a, notes, nil
}

func orderedSet(set []string) []string {
	var out []string
	for _, k := range []string{"title", "summary", "slug", "category", "tags"} {
		for _, s := range set {
			if s == k {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// setAttr sets one attribute by front-matter key; false for a key that is
// no attribute.
func (a *Article) setAttr(key string, value string, list []string, isList bool) bool {
	switch strings.ToLower(key) {
	case "title":
		a.Attrs.Title = value
		a.Set = append(a.Set, "title")
	case "summary", "description":
		if a.Attrs.Summary == "" || strings.ToLower(key) == "summary" {
			a.Attrs.Summary = value
		}
		a.Set = append(a.Set, "summary")
	case "slug":
		a.Attrs.Slug = value
		a.Set = append(a.Set, "slug")
	case "category":
		a.Attrs.Category = value
		a.Set = append(a.Set, "category")
	case "categories":
		if !isList {
			list = splitList(value)
		}
		if len(list) > 0 && a.Attrs.Category == "" {
			a.Attrs.Category = list[0]
		}
		a.Set = append(a.Set, "category")
	case "tags", "keywords":
		if !isList {
			list = splitList(value)
		}
		a.Attrs.Tags = append(a.Attrs.Tags, list...)
		a.Set = append(a.Set, "tags")
	default:
		return false
	}
	return true
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

var (
	yamlKeyLine  = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*?))?[ \t]*$`)
	yamlListItem = regexp.MustCompile(`^[ \t]+-[ \t]+(.*?)[ \t]*$|^-[ \t]+(.*?)[ \t]*$`)
)

// readYAMLFrontMatter reads the YAML front matter writers use: "key:
// value" lines with plain, single- or double-quoted scalars, flow lists
// ([a, b]), block lists ("- a" lines) and block scalars (| and >). Lines
// of anything else are reported. first is the line of the opening "---".
func readYAMLFrontMatter(body []byte, first int, a *Article) []Unsupported {
	var notes []Unsupported
	lines := strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n")
	note := func(i int, kind, text, what string) {
		notes = append(notes, Unsupported{Line: first + 1 + i, Kind: kind, Text: shorten(text), Note: what})
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		m := yamlKeyLine.FindStringSubmatch(line)
		if m == nil {
			note(i, UnsupportedFrontMatterKey, line, "front matter line not understood; kept nowhere")
			continue
		}
		key, raw, start := m[1], m[2], i
		var value string
		var list []string
		isList := false
		switch {
		case raw == "" || strings.HasPrefix(raw, "#"):
			// A block list, or nothing.
			for i+1 < len(lines) {
				lm := yamlListItem.FindStringSubmatch(lines[i+1])
				if lm == nil {
					break
				}
				i++
				list = append(list, yamlScalar(lm[1]+lm[2]))
				isList = true
			}
		case raw == "|" || raw == ">" || raw == "|-" || raw == ">-":
			var parts []string
			for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || strings.HasPrefix(lines[i+1], " ") || strings.HasPrefix(lines[i+1], "\t")) {
				i++
				parts = append(parts, strings.TrimSpace(lines[i]))
			}
			sep := "\n"
			if raw[0] == '>' {
				sep = " "
			}
			value = strings.TrimSpace(strings.Join(parts, sep))
		case strings.HasPrefix(raw, "["):
			isList = true
			for _, p := range splitFlow(strings.TrimSuffix(strings.TrimPrefix(stripComment(raw), "["), "]")) {
				list = append(list, yamlScalar(p))
			}
		default:
			value = yamlScalar(raw)
		}
		if isList && strings.ToLower(key) != "tags" && strings.ToLower(key) != "keywords" && strings.ToLower(key) != "categories" {
			value = strings.Join(list, ", ")
		}
		if !a.setAttr(key, value, list, isList) {
			shown := value
			if isList {
				shown = strings.Join(list, ", ")
			}
			note(start, UnsupportedFrontMatterKey, key+": "+shown, "no article attribute for "+key+"; kept nowhere")
		}
	}
	return notes
}

// splitFlow splits the inside of a YAML flow list at commas outside quotes.
func splitFlow(s string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	for _, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			cur.WriteRune(c)
		case c == '"' || c == '\'':
			quote = c
			cur.WriteRune(c)
		case c == ',':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(c)
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		out = append(out, cur.String())
	}
	return out
}

func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 && !strings.ContainsAny(s[:i], `"'`) {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// yamlScalar reads one scalar: "double-quoted" (with escapes),
// 'single-quoted' (” is a quote) or plain (a " #" starts a comment).
func yamlScalar(s string) string {
	s = strings.TrimSpace(s)
	switch {
	case len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"':
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
		return s[1 : len(s)-1]
	case len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'':
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return stripComment(s)
}

// readTOMLFrontMatter reads TOML front matter with the attributes as
// strings and string arrays; other keys are reported.
func readTOMLFrontMatter(body []byte, a *Article) []Unsupported {
	var fm struct {
		Title       *string  `toml:"title"`
		Summary     *string  `toml:"summary"`
		Description *string  `toml:"description"`
		Slug        *string  `toml:"slug"`
		Category    *string  `toml:"category"`
		Categories  []string `toml:"categories"`
		Tags        []string `toml:"tags"`
		Keywords    []string `toml:"keywords"`
	}
	md, err := toml.Decode(string(body), &fm)
	if err != nil {
		return []Unsupported{{Line: 1, Kind: UnsupportedFrontMatterKey, Text: "+++", Note: "TOML front matter not understood (" + err.Error() + "); kept nowhere"}}
	}
	for _, kv := range []struct {
		key string
		v   *string
	}{{"title", fm.Title}, {"description", fm.Description}, {"summary", fm.Summary}, {"slug", fm.Slug}, {"category", fm.Category}} {
		if kv.v != nil {
			a.setAttr(kv.key, *kv.v, nil, false)
		}
	}
	if md.IsDefined("categories") {
		a.setAttr("categories", "", fm.Categories, true)
	}
	if md.IsDefined("tags") {
		a.setAttr("tags", "", fm.Tags, true)
	}
	if md.IsDefined("keywords") {
		a.setAttr("keywords", "", fm.Keywords, true)
	}
	var notes []Unsupported
	for _, k := range md.Undecoded() {
		if len(k) != 1 {
			continue // inside a table reported below
		}
		notes = append(notes, Unsupported{Line: 1, Kind: UnsupportedFrontMatterKey, Text: k.String(), Note: "no article attribute for " + k.String() + "; kept nowhere"})
	}
	return notes
}

// FrontMatter writes the attributes a file can carry (title, summary,
// slug, category, tags) as YAML front matter that ImportArticle reads
// back to the same values; "" when none is set.
func FrontMatter(a Attributes) string {
	var b strings.Builder
	for _, kv := range [][2]string{{"title", a.Title}, {"summary", a.Summary}, {"slug", a.Slug}, {"category", a.Category}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], strconv.Quote(kv[1]))
		}
	}
	if len(a.Tags) > 0 {
		tags := make([]string, len(a.Tags))
		for i, t := range a.Tags {
			tags[i] = strconv.Quote(t)
		}
		fmt.Fprintf(&b, "tags: [%s]\n", strings.Join(tags, ", "))
	}
	if b.Len() == 0 {
		return ""
	}
	return "---\n" + b.String() + "---\n\n"
}

// RenderArticleMarkdown is RenderMarkdown of the body after the front
// matter of the attributes: what ImportArticle reads back as the same
// article.
func RenderArticleMarkdown(a Article) string {
	return FrontMatter(a.Attrs) + RenderMarkdown(a.Body)
}
