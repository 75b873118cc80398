package flowdoc

import (
	"net/url"
	"strings"
	"unicode"
)

// URL policy. Folio renders documents into web pages, so every URL in a
// document is checked against an allow-list rather than a deny-list:
//
//   - links (Run.Link) may be absolute http:// or https:// URLs with a host,
//     or mailto: URLs with an address;
//   - resource URLs (media src, file src, bookmark url, embed url) may only be
//     absolute http:// or https:// URLs with a host, since they are fetched
//     or framed;
//   - everything else is refused: relative and protocol-relative URLs
//     ("/a", "//host/a", "#frag"), javascript:, data:, vbscript:, file:,
//     blob: and any other scheme, URLs with user info ("https://u:p@host"),
//     white space or control characters, and URLs longer than MaxURLLength
//     bytes.
//
// Scheme and host names are case-insensitive. Sanitize never rewrites or
// drops a URL: a refused URL is a validation problem the author must see.

// checkLink returns the rule a link breaks, or "".
func checkLink(s string) string { return checkURL(s, true) }

// checkResource returns the rule a resource URL breaks, or "".
func checkResource(s string) string { return checkURL(s, false) }

func checkURL(s string, link bool) string {
	want := "http or https"
	if link {
		want = "http, https or mailto"
	}
	if len(s) > MaxURLLength {
		return "URL is longer than 2048 bytes"
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return "URL must not contain white space or control characters"
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		if link {
			return "link scheme must be http, https or mailto (relative URLs are not allowed)"
		}
		return "URL scheme must be http or https (relative URLs are not allowed)"
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
			return "URL must name a host (http://host/…)"
		}
		if u.User != nil {
			return "URL must not carry user info"
		}
		return ""
	case "mailto":
		if !link {
			break
		}
		if u.Opaque == "" || !strings.Contains(u.Opaque, "@") {
			return "mailto link must name an address (mailto:name@host)"
		}
		return ""
	}
	if link {
		return "link scheme must be " + want
	}
	return "URL scheme must be " + want
}
