// Package mediatype decides what an uploaded asset is, from its bytes
// alone, and whether Folio stores and serves it.
//
// The type is sniffed (net/http.DetectContentType and the format's own
// signature), never taken from a client's Content-Type, and checked
// against an allow-list: PNG, JPEG, GIF, WebP and AVIF images, PDF, plain
// UTF-8 text and ZIP archives. HTML, SVG, XML and every other type are
// refused, as is text that starts like markup. Images are checked again by
// reading their header the way a decoder does (image.DecodeConfig for PNG,
// JPEG and GIF; the RIFF/VP8 and ISOBMFF headers for WebP and AVIF): the
// dimensions are recorded and bounded, and a PNG, JPEG or GIF that stops
// before its end marker (IEND, EOI, the trailer) is refused as truncated.
//
// Invariant: Sniff is a pure function of the bytes, so a store can check
// at any time (fsck, pack import) that an asset's recorded type is the one
// its bytes have.
package mediatype
