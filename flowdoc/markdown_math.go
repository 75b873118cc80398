package flowdoc

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Math syntax for ImportMarkdown: $$ … $$ on lines of their own is an
// equation block, $…$ inside a line an inline equation. An inline
// equation needs non-blank content that neither starts nor ends with a
// blank, and its closing $ must not be followed by a digit, so "$5 and
// $10" stays text.

var (
	kindMathBlock  = ast.NewNodeKind("FlowMathBlock")
	kindMathInline = ast.NewNodeKind("FlowMathInline")
)

type mathBlock struct {
	ast.BaseBlock
	closed bool
}

func (n *mathBlock) Kind() ast.NodeKind { return kindMathBlock }
func (n *mathBlock) IsRaw() bool        { return true }
func (n *mathBlock) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, nil, nil)
}

type mathInline struct {
	ast.BaseInline
	Latex string
}

func (n *mathInline) Kind() ast.NodeKind { return kindMathInline }
func (n *mathInline) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Latex": n.Latex}, nil)
}

type mathBlockParser struct{}

func (mathBlockParser) Trigger() []byte { return []byte{'$'} }

func (mathBlockParser) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, seg := reader.PeekLine()
	pos := pc.BlockOffset()
	if pos < 0 || !bytes.HasPrefix(line[pos:], []byte("$$")) {
		return nil, parser.NoChildren
	}
	n := &mathBlock{}
	start := pos + 2
	rest := line[start:]
	trimmed := bytes.TrimSpace(rest)
	if len(trimmed) >= 2 && bytes.HasSuffix(trimmed, []byte("$$")) {
		// $$ x $$ on one line.
		inner := bytes.TrimSpace(trimmed[:len(trimmed)-2])
		if len(inner) > 0 {
			off := start + bytes.Index(rest, inner)
			n.Lines().Append(text.NewSegment(seg.Start+off, seg.Start+off+len(inner)))
		}
		n.closed = true
	} else if len(trimmed) > 0 {
		off := start + bytes.Index(rest, trimmed)
		n.Lines().Append(text.NewSegment(seg.Start+off, seg.Start+off+len(trimmed)))
	}
	reader.AdvanceToEOL()
	return n, parser.NoChildren
}

func (mathBlockParser) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	n := node.(*mathBlock)
	if n.closed {
		return parser.Close
	}
	line, seg := reader.PeekLine()
	if line == nil {
		return parser.Close
	}
	trimmed := bytes.TrimSpace(line)
	if bytes.HasSuffix(trimmed, []byte("$$")) {
		inner := bytes.TrimSpace(trimmed[:len(trimmed)-2])
		if len(inner) > 0 {
			off := bytes.Index(line, inner)
			n.Lines().Append(text.NewSegment(seg.Start+off, seg.Start+off+len(inner)))
		}
		n.closed = true
		reader.AdvanceToEOL()
		return parser.Close
	}
	n.Lines().Append(seg)
	reader.AdvanceToEOL()
	return parser.Continue | parser.NoChildren
}

func (mathBlockParser) Close(node ast.Node, reader text.Reader, pc parser.Context) {}
func (mathBlockParser) CanInterruptParagraph() bool                                { return true }
func (mathBlockParser) CanAcceptIndentedLine() bool                                { return false }

type mathInlineParser struct{}

func (mathInlineParser) Trigger() []byte { return []byte{'$'} }

func (mathInlineParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	if len(line) < 3 || line[1] == '$' || line[1] == ' ' || line[1] == '\t' || line[1] == '\n' {
		return nil
	}
	for i := 1; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '\n', '\r':
			return nil
		case '$':
			if line[i-1] == ' ' || line[i-1] == '\t' || (i+1 < len(line) && line[i+1] >= '0' && line[i+1] <= '9') {
				return nil
			}
			n := &mathInline{Latex: string(line[1:i])}
			n.SetPos(seg.Start)
			block.Advance(i + 1)
			return n
		}
	}
	return nil
}

// mathExtension adds the math syntax to a goldmark parser.
type mathExtension struct{}

func (mathExtension) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithBlockParsers(util.Prioritized(mathBlockParser{}, 650)),
		parser.WithInlineParsers(util.Prioritized(mathInlineParser{}, 150)),
	)
}
