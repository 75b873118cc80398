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
//     mailto: URLs with an address, or relative references within the site
//     ("/about", "../post/", "page.html", "#section", "?page=2");
//   - the src of a media block may be an absolute http:// or https:// URL
//     with a host or a relative reference (an image beside the article);
//   - other resource URLs (file src, bookmark url, embed url) may only be
//     absolute http:// or https:// URLs with a host, since they are fetched
//     or framed;
//   - everything else is refused: protocol-relative URLs ("//host/a"),
//     javascript:, data:, vbscript:, file:, blob: and any other scheme,
//     URLs with user info ("https://u:p@host"), white space or control
//     characters, backslashes in a relative reference (browsers read "\"
//     as "/"), and URLs longer than MaxURLLength bytes.
//
// Scheme and host names are case-insensitive. Sanitize never rewrites or
// drops a URL: a refused URL is a validation problem the author must see.
// A relative reference is stored as written; renderers resolve it against
// the site it is shown on.

// checkLink returns the rule a link breaks, or "".
func checkLink(s string) string {
	if IsRelativeURL(s) {
		return checkRelative(s)
	}
	return checkURL(s, true)
}

// checkMediaSrc returns the rule the src of a media block breaks, or "".
func checkMediaSrc(s string) string {
	if IsRelativeURL(s) {
		return checkRelative(s)
	}
	return checkURL(s, false)
}

// checkResource returns the rule a resource URL breaks, or "".
func checkResource(s string) string { return checkURL(s, false) }

// IsRelativeURL reports whether s is a relative reference: it does not
// start with a scheme ("name:", RFC 3986 §3.1) and is not empty.
func IsRelativeURL(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return false
		default:
			return true
		}
	}
	return true
}

// checkRelative returns the rule a relative reference breaks, or "".
func checkRelative(s string) string {
	if rule := checkChars(s); rule != "" {
		return rule
	}
	if strings.HasPrefix(s, "//") {
		return "a protocol-relative URL (//host/…) is not allowed; write its scheme (https://host/…)"
	}
	if strings.Contains(s, "\\") {
		return "URL must not contain a backslash"
	}
	if _, err := url.Parse(s); err != nil {
		return "URL is not well formed (encode % as %25)"
	}
	return ""
}

// checkChars returns the rule the length or the characters of s break.
func checkChars(s string) string {
	if len(s) > MaxURLLength {
		return "URL is longer than 2048 bytes"
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return "URL must not contain white space or control characters"
		}
	}
	return ""
}

func checkURL(s string, link bool) string {
	want := "http or https"
	if link {
		want = "http, https or mailto"
	}
	if rule := checkChars(s); rule != "" {
		return rule
	}
	u, err := url.Parse(s)
	if err != nil {
		return "URL is not well formed (encode % as %25)"
	}
	if u.Scheme == "" { // a relative reference, where only absolute URLs may be
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
