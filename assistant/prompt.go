package assistant

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/llm"
)

// PromptVersion is the version of the embedded prompt files in use. A
// change to any of them is a new version with new file names, so that the
// hash a run recorded always names text that still exists in the source.
const PromptVersion = "v1"

//go:embed prompts/*.md
var promptFiles embed.FS

// prompt is the system text for one scope and what a run records of it.
type prompt struct {
	info PromptInfo
	text string
}

// promptFor assembles the system prompt of a scope: the general rules and
// the scope's answer form. Its hash covers both files' names and bytes.
func promptFor(k ScopeKind) prompt {
	files := []string{"prompts/system." + PromptVersion + ".md", "prompts/" + string(k) + "." + PromptVersion + ".md"}
	h := sha256.New()
	var parts []string
	for _, f := range files {
		data, err := promptFiles.ReadFile(f)
		if err != nil {
			panic(fmt.Sprintf("assistant: embedded prompt %s: %v", f, err)) // a build defect
		}
		h.Write([]byte(f))
		h.Write([]byte{0})
		h.Write(data)
		h.Write([]byte{0})
		parts = append(parts, strings.TrimSpace(string(data)))
	}
	return prompt{
		info: PromptInfo{Name: "writing/" + string(k), Version: PromptVersion, Hash: hex.EncodeToString(h.Sum(nil))},
		text: strings.Join(parts, "\n\n"),
	}
}

// answerSchema is the JSON Schema of an answer for a scope: the ops a
// scope may use, loosely (domain validation is the server's).
func answerSchema(k ScopeKind) *llm.Schema {
	ops := map[ScopeKind][]string{
		ScopeSelection: {"replace_selection"},
		ScopeBlock:     {"replace_block", "insert_before", "insert_after", "delete_block"},
		ScopeSection:   {"replace_section"},
		ScopeDocument:  {"replace_document"},
	}[k]
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"summary": map[string]any{"type": "string"},
			"ops": map[string]any{
				"type": "array",
				"items": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"op":       map[string]any{"type": "string", "enum": ops},
						"blockId":  map[string]any{"type": "string"},
						"start":    map[string]any{"type": "integer"},
						"end":      map[string]any{"type": "integer"},
						"richText": map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
						"block":    map[string]any{"type": "object"},
						"blocks":   map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
						"document": map[string]any{"type": "object"},
					},
					"required": []string{"op"},
				},
			},
		},
		"required": []string{"summary", "ops"},
	}
	data, _ := json.Marshal(schema) // plain data: cannot fail
	return &llm.Schema{Name: "folio_writing_" + string(k), Schema: data}
}

// messages builds the conversation sent to the model for a run.
func messages(p prompt, pl payload, pv *PresetVersion, r resolved) []llm.Message {
	out := []llm.Message{{Role: llm.System, Content: p.text}}
	if pv != nil {
		var b strings.Builder
		kind := "Writing preset"
		if pv.Type == EditingPreset {
			kind = "Editing preset"
		}
		fmt.Fprintf(&b, "%s «%s» (version %d). Follow it for this request:\n\n%s", kind, pv.Name, pv.Meta.Number, strings.TrimSpace(pv.Prompt))
		for i, rule := range pv.Rules {
			if rule.Name != "" {
				fmt.Fprintf(&b, "\n%d. %s：%s", i+1, rule.Name, rule.Instruction)
			} else {
				fmt.Fprintf(&b, "\n%d. %s", i+1, rule.Instruction)
			}
		}
		out = append(out, llm.Message{Role: llm.System, Content: b.String()})
	}
	if pl.Persona != nil {
		out = append(out, llm.Message{Role: llm.System, Content: personaMessage(pl.Persona)})
	}
	var u strings.Builder
	if c := pl.Context; c.Scanned > 0 || c.Omitted > 0 {
		u.WriteString("# Conversation so far (for continuity only)\n")
		if c.Omitted > 0 {
			fmt.Fprintf(&u, "(%d earlier messages omitted)\n", c.Omitted)
		}
		if c.Summary != "" {
			fmt.Fprintf(&u, "Older messages, summarised:\n%s\n", c.Summary)
		}
		for _, m := range c.Recent {
			text := m.Text
			if m.Truncated {
				text += " …(cut)"
			}
			fmt.Fprintf(&u, "%s\n%s\n", turnTag(m), text)
		}
		u.WriteString("\n")
	}
	u.WriteString("# Current request (this wins over the conversation)\n")
	fmt.Fprintf(&u, "Article version: %s\nScope: %s\nInstruction: %s\n\n", pl.Base.Label, pl.Scope.String(), pl.Instruction)
	u.WriteString("# Content in scope (FlowDocument JSON)\n")
	u.Write(scopeJSON(pl.Scope, r))
	u.WriteString("\n\nAnswer with the JSON object only.")
	out = append(out, llm.Message{Role: llm.User, Content: u.String()})
	return out
}

// scopeJSON is the content in scope as the model sees it.
func scopeJSON(s Scope, r resolved) []byte {
	var v any
	switch s.Kind {
	case ScopeSelection:
		v = map[string]any{"blockId": s.Block, "start": s.Start, "end": s.End, "selected": r.text, "block": r.blocks[0]}
	case ScopeBlock:
		v = map[string]any{"block": r.blocks[0]}
	case ScopeSection:
		v = map[string]any{"blocks": r.blocks}
	default:
		v = map[string]any{"document": flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: r.blocks}}
	}
	data, _ := json.Marshal(v) // plain data: cannot fail
	return data
}

// editTask is the request in structured form (llm.EditTask) for providers
// that edit the scope's blocks themselves rather than read the prompt: the
// local provider answers it with the same {"summary", "ops"} object the
// prompt asks a model for, so its answer goes through the same extraction,
// domain repair and validation. It carries the scope's blocks as the
// baseline has them, the instruction, the personalization and, for an
// editing preset, the pinned version's name and rule ids.
func editTask(pl payload, pv *PresetVersion, r resolved) *llm.EditTask {
	kind := map[ScopeKind]string{ScopeSelection: llm.EditSelection, ScopeBlock: llm.EditBlock,
		ScopeSection: llm.EditSection, ScopeDocument: llm.EditDocument}[pl.Scope.Kind]
	t := &llm.EditTask{
		Instruction: pl.Instruction,
		Scope:       &llm.EditScope{Kind: kind, Blocks: r.blocks, Start: pl.Scope.Start, End: pl.Scope.End},
	}
	switch pl.Personalization.Kind {
	case PersonalizeEditing:
		t.Personalization = "editing"
	case PersonalizeWriting:
		t.Personalization = "writing"
	case PersonalizePersona:
		t.Personalization = "persona"
	}
	if pv != nil && pv.Type == EditingPreset {
		t.Preset = &llm.EditPreset{ID: pv.Preset, Name: pv.Name, Rules: make([]string, len(pv.Rules))}
		for i, rule := range pv.Rules {
			t.Preset.Rules[i] = rule.ID
		}
	}
	return t
}
