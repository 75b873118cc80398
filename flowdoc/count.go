package flowdoc

import "fmt"

// DecodeLimits bound what one decoded request may hold, so that the memory
// and work spent on it are bounded by configuration rather than by what a
// client sends. A zero or negative field means no bound.
type DecodeLimits struct {
	MaxBlocks int // blocks, nested ones included
	MaxRuns   int // rich-text runs, list items and table cells
}

// LimitError reports input that holds more of What ("blocks", "runs", or
// a caller's own unit such as "changes") than Limit. A streaming decoder
// returns it as soon as the count passes the limit, having read no more.
type LimitError struct {
	What  string
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("flowdoc: more than %d %s", e.Limit, e.What)
}

// Counts are the nodes a decoder has built, checked against DecodeLimits.
type Counts struct {
	Blocks, Runs int
}

// AddBlock counts one block.
func (c *Counts) AddBlock(l DecodeLimits) error {
	c.Blocks++
	if l.MaxBlocks > 0 && c.Blocks > l.MaxBlocks {
		return &LimitError{What: "blocks", Limit: l.MaxBlocks}
	}
	return nil
}

// AddRun counts one rich-text run, list item or table cell.
func (c *Counts) AddRun(l DecodeLimits) error {
	c.Runs++
	if l.MaxRuns > 0 && c.Runs > l.MaxRuns {
		return &LimitError{What: "runs", Limit: l.MaxRuns}
	}
	return nil
}

// CheckCounts counts blocks as a streaming decoder of them would (every
// block, nested ones included; every run, list item and table cell) and
// returns a *LimitError when they exceed l. It stops counting at the first
// limit passed.
func CheckCounts(blocks []Block, l DecodeLimits) error {
	var c Counts
	return c.Add(blocks, l)
}

// Add counts blocks and everything in them, as CheckCounts does, adding to
// what c counted before.
func (c *Counts) Add(blocks []Block, l DecodeLimits) error { return c.blocks(blocks, l) }

func (c *Counts) blocks(bs []Block, l DecodeLimits) error {
	for i := range bs {
		b := &bs[i]
		if err := c.AddBlock(l); err != nil {
			return err
		}
		if err := c.runs(b.RichText, l); err != nil {
			return err
		}
		if err := c.items(b.Items, l); err != nil {
			return err
		}
		for _, row := range b.Rows {
			for _, cell := range row.Cells {
				if err := c.AddRun(l); err != nil {
					return err
				}
				if err := c.runs(cell, l); err != nil {
					return err
				}
			}
		}
		if err := c.blocks(b.Children, l); err != nil {
			return err
		}
		for _, col := range b.Cols {
			if err := c.blocks(col.Blocks, l); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Counts) runs(rs []Run, l DecodeLimits) error {
	for range rs {
		if err := c.AddRun(l); err != nil {
			return err
		}
	}
	return nil
}

func (c *Counts) items(items []ListItem, l DecodeLimits) error {
	for _, it := range items {
		if err := c.AddRun(l); err != nil {
			return err
		}
		if err := c.runs(it.RichText, l); err != nil {
			return err
		}
		if err := c.blocks(it.Blocks, l); err != nil {
			return err
		}
		if err := c.items(it.Items, l); err != nil {
			return err
		}
	}
	return nil
}
