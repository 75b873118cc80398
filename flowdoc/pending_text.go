package flowdoc

// This file declares the API that text.go, markdown.go and diff.go
// implement. Each declaration here moves to its own file with its
// implementation; the file is then deleted.

import "fmt"

// ChangeKind says how a block differs between two documents.
type ChangeKind string

// Kinds of block change.
const (
	Added    ChangeKind = "added"
	Deleted  ChangeKind = "deleted"
	Modified ChangeKind = "modified"
	Moved    ChangeKind = "moved"
)

// WordEdit is one step of a word-level text diff.
type WordEdit struct {
	Op   string `json:"op"` // equal | insert | delete
	Text string `json:"text"`
}

// BlockChange is one block's difference between two documents.
type BlockChange struct {
	Kind    ChangeKind `json:"kind"`
	BlockID string     `json:"blockId"`
	Type    BlockType  `json:"type"`
	From    int        `json:"from"` // index in a, -1 when added
	To      int        `json:"to"`   // index in b, -1 when deleted
	Moved   bool       `json:"moved,omitempty"`
	Words   []WordEdit `json:"words,omitempty"`
}

// Diff compares two documents block by block.
func Diff(a, b Document) []BlockChange { return nil }

// RenderText renders d as plain text.
func RenderText(d Document) string { return "" }

// RenderMarkdown renders d as Markdown.
func RenderMarkdown(d Document) string { return "" }

// Unsupported is something in imported Markdown that has no block.
type Unsupported struct {
	Line int    `json:"line"`
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// ImportMarkdown converts CommonMark + GFM tables to a document.
func ImportMarkdown(src []byte) (Document, []Unsupported, error) {
	return Document{}, nil, fmt.Errorf("flowdoc: ImportMarkdown not implemented")
}
