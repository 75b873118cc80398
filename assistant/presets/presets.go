package presets

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// Kind is a preset's type.
type Kind string

// Kinds.
const (
	Writing Kind = "writing" // what to write like
	Editing Kind = "editing" // how to edit the author's text
)

// Source is where a preset's guidance comes from.
type Source struct {
	Title  string `toml:"title" json:"title"`
	Author string `toml:"author" json:"author"`
	Year   string `toml:"year" json:"year,omitempty"`
	// Note says what the preset takes from the source.
	Note string `toml:"note" json:"note"`
}

// Rule is one rule of an editing preset.
type Rule struct {
	// ID is the localedit rule id, which the local provider runs.
	ID          string `toml:"id" json:"id"`
	Name        string `toml:"name" json:"name"`
	Instruction string `toml:"instruction" json:"instruction"`
}

// Preset is one built-in preset.
type Preset struct {
	ID          string `toml:"id" json:"id"`
	Kind        Kind   `toml:"kind" json:"kind"`
	Name        string `toml:"name" json:"name"`
	Description string `toml:"description" json:"description"`
	// Prompt is the text given to models. For an editing preset, the rules'
	// instructions follow it (see FullPrompt).
	Prompt  string   `toml:"prompt" json:"prompt"`
	Rules   []Rule   `toml:"rules" json:"rules,omitempty"`
	Sources []Source `toml:"sources" json:"sources"`
}

// FullPrompt is the preset's prompt with its rules, numbered.
func (p Preset) FullPrompt() string {
	if len(p.Rules) == 0 {
		return p.Prompt
	}
	var b strings.Builder
	b.WriteString(p.Prompt)
	for i, r := range p.Rules {
		fmt.Fprintf(&b, "\n%d. %s：%s", i+1, r.Name, r.Instruction)
	}
	return b.String()
}

//go:embed builtin.toml
var builtinTOML string

var parsed = sync.OnceValues(func() ([]Preset, error) {
	var f struct {
		Preset []Preset `toml:"preset"`
	}
	md, err := toml.Decode(builtinTOML, &f)
	if err != nil {
		return nil, fmt.Errorf("presets: builtin.toml: %w", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("presets: builtin.toml: unknown keys %v", und)
	}
	return f.Preset, nil
})

// Builtin returns the built-in presets in their display order (writing
// presets first). The caller owns the returned slice.
func Builtin() ([]Preset, error) {
	ps, err := parsed()
	if err != nil {
		return nil, err
	}
	out := make([]Preset, len(ps))
	for i, p := range ps {
		p.Rules = append([]Rule(nil), p.Rules...)
		p.Sources = append([]Source(nil), p.Sources...)
		out[i] = p
	}
	return out, nil
}
