package presets

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"unicode"

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
	// NameEN and DescriptionEN are the name and description in English
	// (Name and Description are Chinese); see Localize.
	NameEN        string `toml:"name_en" json:"nameEn"`
	DescriptionEN string `toml:"description_en" json:"descriptionEn"`
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

// Languages a built-in preset's name and description exist in.
const (
	Chinese = "zh"
	English = "en"
)

// Localize returns the name and description of preset id in lang, for a
// built-in preset whose name and description are still the built-in ones
// (name, desc as stored): English for English, the stored text for
// anything else. A preset an admin renamed keeps the admin's words.
func Localize(id, name, desc, lang string) (string, string) {
	if lang != English {
		return name, desc
	}
	all, err := Builtin()
	if err != nil {
		return name, desc
	}
	for _, p := range all {
		if p.ID == id && p.Name == name && p.NameEN != "" {
			if p.Description == desc {
				desc = p.DescriptionEN
			}
			return p.NameEN, desc
		}
	}
	return name, desc
}

// DetectLanguage is the language of text for choosing the words shown
// with it: Chinese when at least one letter in five is a CJK ideograph
// (Chinese prose mixes in Latin names, numbers and code), else English
// when it has letters, else "" (nothing to tell by).
func DetectLanguage(text string) string {
	han, letters := 0, 0
	for _, r := range text {
		switch {
		case unicode.Is(unicode.Han, r):
			han++
			letters++
		case unicode.IsLetter(r):
			letters++
		}
	}
	switch {
	case letters == 0:
		return ""
	case han*5 >= letters:
		return Chinese
	}
	return English
}
