package syncproto_test

import (
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/syncproto"
)

// assistSamples holds one message of every writing-assistant type, as in
// docs/protocol.md ("Writing assistant").
func assistSamples() []syncproto.Message {
	after := para("p3", "To win, the team decided.")
	scope := syncproto.AssistScope{Kind: "block", Block: "p3"}
	pin := &syncproto.PresetPin{Type: "editing", ID: "six-rules", VersionID: "pv5m2x7c", Number: 1, Name: "六条文章强化规则"}
	queued := syncproto.RunInfo{ID: "rq3m7x", Doc: "d1", Session: "c8n2k4", State: "queued", Scope: scope,
		Instruction: "按所选编辑预设编辑当前范围，并保留事实、观点和作者声音", Personalization: "editing_preset", Preset: pin,
		Base: "v1.r4", Created: 1767225601000}
	done := queued
	done.State, done.Attempts, done.Provider, done.Model = "succeeded", 1, "local", "folio-local-1"
	done.PromptHash = "5be0c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8"
	done.Outcome, done.Summary, done.Suggestion = "suggestion", "2 edits by the editing rules", "s7kp2d"
	done.Started, done.Finished = 1767225601050, 1767225602100
	sugg := syncproto.SuggestionInfo{ID: "s7kp2d", Doc: "d1", Run: "rq3m7x", Session: "c8n2k4", Status: "pending", Scope: scope,
		Base: "v1.r4", Ops: []flowdoc.Op{{Op: flowdoc.ReplaceBlock, BlockID: "p3", Block: &after}},
		Summary: "2 edits by the editing rules", Created: 1767225602100}
	accepted := sugg
	accepted.Status, accepted.Decided, accepted.DecidedBy, accepted.Version = "accepted", 1767225640000, "author-a", "v1.r5"
	rejected := sugg
	rejected.Status, rejected.Decided, rejected.DecidedBy, rejected.RejectReason = "rejected", 1767225640000, "author-a", "keep my wording"
	cand := flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{after}}
	session := syncproto.SessionInfo{ID: "c8n2k4", Doc: "d1", Created: 1767225500000, Updated: 1767225602100, Messages: 2}
	currentSession := session
	currentSession.Current = true
	chosen := session
	chosen.Personalization = &syncproto.SessionChoice{Kind: "editing_preset", ID: "six-rules"}
	second := syncproto.SessionInfo{ID: "c2r9w6", Doc: "d1", Title: "intro", Created: 1767225700000, Updated: 1767225700000}
	personaRun := syncproto.RunInfo{ID: "r4pm8c", Doc: "d1", Session: "c8n2k4", State: "succeeded", Scope: scope,
		Instruction: "用我的口吻改写", Personalization: "persona",
		Persona: &syncproto.PersonaPin{ID: "pnb3kq7xw2m5r8t4ay", Name: "博客", Version: "pnb3kq7xw2m5r8t4ay-v2", Seq: 2,
			Style: "sp3f0c9a1b7e2d4c6a8b0e1f2a", Memory: "ms7d2e4f6a8b0c1d3e5f7a9b1c", MemoryKeys: []string{"mi4be07c91d2a6f3e58b0c", "mi9a13f6d0c4b7e28a5d1f"}, MemoryMatched: 9,
			References: []syncproto.ReferencePin{{Doc: "d7", Version: "9c4e1a7b3d5f8e2c6a0b4d8f1e3a5c7b9d2f4e6a8c0b1d3f5e7a9c2b4d6f8e0a", Label: "v2.r0",
				Title: "加入星火的第一年", Score: 2.5, Reasons: []string{"same category", "shared tags: 搜索"}}}},
		Grounding: &syncproto.RunGrounding{Pass: true, Checked: 2, MemoryProvided: 2, UsedMemory: []string{"mi4be07c91d2a6f3e58b0c"}, References: 1},
		Base:      "v1.r4", Attempts: 1, Provider: "openai", Model: "gpt-4.1-mini",
		PromptHash: "7a1c3e5f7b9d0e2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f", Outcome: "suggestion",
		Summary: "用作者的口吻改写", Suggestion: "s2vn6h", Created: 1767225801000, Started: 1767225801040, Finished: 1767225803900}
	personaSugg := syncproto.SuggestionInfo{ID: "s2vn6h", Doc: "d1", Run: "r4pm8c", Session: "c8n2k4", Status: "rejected", Scope: scope,
		Base: "v1.r4", Ops: []flowdoc.Op{{Op: flowdoc.ReplaceBlock, BlockID: "p3", Block: &after}}, Summary: "用作者的口吻改写",
		Created: 1767225803900, Decided: 1767225840000, DecidedBy: "author-a",
		Closeness: &syncproto.Closeness{Delta: 0.82, Percentile: 0.6, Units: 212, Reliable: true}}
	return []syncproto.Message{
		&syncproto.AssistRequest{Envelope: syncproto.Envelope{ID: "30"}, Doc: "d1", Scope: scope, Instruction: "用我的口吻改写",
			Persona: "pnb3kq7xw2m5r8t4ay"},
		&syncproto.AssistCancelDone{Envelope: syncproto.Envelope{ID: "31"}, Run: personaRun},
		&syncproto.SuggestionRejectDone{Envelope: syncproto.Envelope{ID: "32"}, Suggestion: personaSugg},
		&syncproto.AssistRequest{Envelope: syncproto.Envelope{ID: "20"}, Doc: "d1", Scope: scope, EditingPreset: "six-rules",
			IdempotencyKey: "req-7f3a"},
		&syncproto.AssistRequest{Envelope: syncproto.Envelope{ID: "21"}, Doc: "d1",
			Scope: syncproto.AssistScope{Kind: "selection", Block: "p3", Start: 3, End: 11}, Instruction: "Say it more plainly.",
			WritingPreset: "clear-concise", Session: "c8n2k4"},
		&syncproto.AssistQueued{Envelope: syncproto.Envelope{ID: "20"}, Doc: "d1", Run: queued, Created: true, Session: "c8n2k4",
			Message: 1, Checkpoint: "v1.r4", Stream: "run:rq3m7x"},
		&syncproto.AssistCancel{Envelope: syncproto.Envelope{ID: "22"}, Run: "rq3m7x"},
		&syncproto.AssistCancelDone{Envelope: syncproto.Envelope{ID: "22"}, Run: done},
		&syncproto.SuggestionPreview{Envelope: syncproto.Envelope{ID: "23"}, Suggestion: "s7kp2d"},
		&syncproto.SuggestionPreviewDone{Envelope: syncproto.Envelope{ID: "23"}, Suggestion: sugg, Candidate: cand,
			Changes: []flowdoc.BlockChange{{Kind: flowdoc.Modified, BlockID: "p3", Type: flowdoc.Paragraph, From: 0, To: 0,
				Words: []flowdoc.WordEdit{{Op: "delete", Text: "In order to"}, {Op: "insert", Text: "To"}, {Op: "equal", Text: " win, the team "},
					{Op: "delete", Text: "made a decision"}, {Op: "insert", Text: "decided"}, {Op: "equal", Text: "."}}}},
			Current: true, Against: "v1.r4"},
		&syncproto.SuggestionPreviewDone{Envelope: syncproto.Envelope{ID: "33"}, Suggestion: sugg,
			Candidate: flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
				{ID: "p1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "Typed meanwhile."}}}, after}},
			Changes: []flowdoc.BlockChange{{Kind: flowdoc.Modified, BlockID: "p3", Type: flowdoc.Paragraph, From: 1, To: 1,
				Words: []flowdoc.WordEdit{{Op: "delete", Text: "In order to"}, {Op: "insert", Text: "To"}, {Op: "equal", Text: " win, the team "},
					{Op: "delete", Text: "made a decision"}, {Op: "insert", Text: "decided"}, {Op: "equal", Text: "."}}}},
			Current: true, CarriedOver: true, Against: "v1.r6"},
		&syncproto.SuggestionAccept{Envelope: syncproto.Envelope{ID: "24"}, Suggestion: "s7kp2d"},
		&syncproto.SuggestionAccept{Envelope: syncproto.Envelope{ID: "29"}, Suggestion: "s3dq5v", ConfirmDelete: true},
		&syncproto.SuggestionAcceptDone{Envelope: syncproto.Envelope{ID: "24"}, Suggestion: accepted, Version: "v1.r5",
			Fingerprint: flowdoc.FingerprintOf(cand)},
		&syncproto.SuggestionReject{Envelope: syncproto.Envelope{ID: "25"}, Suggestion: "s7kp2d", Reason: "keep my wording"},
		&syncproto.SuggestionRejectDone{Envelope: syncproto.Envelope{ID: "25"}, Suggestion: rejected},
		&syncproto.SessionList{Envelope: syncproto.Envelope{ID: "26"}, Doc: "d1"},
		&syncproto.SessionListDone{Envelope: syncproto.Envelope{ID: "26"}, Doc: "d1", Sessions: []syncproto.SessionInfo{currentSession}},
		&syncproto.SessionStart{Envelope: syncproto.Envelope{ID: "27"}, Doc: "d1", Title: "intro"},
		&syncproto.SessionStartDone{Envelope: syncproto.Envelope{ID: "27"}, Session: second},
		&syncproto.SessionSwitch{Envelope: syncproto.Envelope{ID: "28"}, Doc: "d1", Session: "c8n2k4"},
		&syncproto.SessionSwitchDone{Envelope: syncproto.Envelope{ID: "28"}, Session: session},
		&syncproto.SessionPersonalize{Envelope: syncproto.Envelope{ID: "33"}, Doc: "d1", Session: "c8n2k4",
			Personalization: syncproto.SessionChoice{Kind: "editing_preset", ID: "six-rules"}},
		&syncproto.SessionPersonalizeDone{Envelope: syncproto.Envelope{ID: "33"}, Session: chosen},
	}
}

// assistEvents holds an example of the assistant's events: a run's
// stream and the document stream's suggestion events.
func assistEvents() []syncproto.Message {
	ev := func(typ, stream string, cursor uint64, time int64, data any) syncproto.Message {
		return &syncproto.Event{Envelope: syncproto.Envelope{Type: typ}, Stream: stream, Cursor: cursor, Time: time, Data: data}
	}
	const run, task = "rq3m7x", "18a2b3c4d5e6f708"
	scope := &syncproto.AssistScope{Kind: "block", Block: "p3"}
	return []syncproto.Message{
		ev("queued", "run:"+run, 1, 1767225601000, &syncproto.RunEventData{Run: run, Doc: "d1", Task: task}),
		ev("started", "run:"+run, 2, 1767225601050, &syncproto.RunEventData{Run: run, Task: task, Attempt: 1}),
		ev("progress", "run:"+run, 3, 1767225601150, &syncproto.RunEventData{Run: run, Task: task, Attempt: 1,
			Text: `{"summary":"更短","ops":[{"op":`}),
		ev("retry", "run:"+run, 4, 1767225601400, &syncproto.RunEventData{Run: run, Task: task, Attempt: 1, DelayMs: 2000,
			Code: "provider_rate_limited", Message: "the provider answered 429; retrying in 2s", RateLimited: true}),
		ev("recovered_after_restart", "run:"+run, 5, 1767225700000, &syncproto.RunEventData{Run: run, Task: task, Attempt: 2}),
		ev("succeeded", "run:"+run, 8, 1767225702100, &syncproto.RunEventData{Run: run, Attempt: 2, Outcome: "suggestion",
			Suggestion: "s7kp2d", Status: "pending", Usage: &syncproto.RunUsage{Input: 812, Output: 64, Total: 876}}),
		ev("failed", "run:r5t8vq", 4, 1767225705000, &syncproto.RunEventData{Run: "r5t8vq", Task: "18a2b3c4d5e6f709", Attempt: 1,
			Code: "output_invalid", Message: "the model's operations are not valid for the scope: op 0 replaces block p9, which is not in it"}),
		ev("cancelled", "run:r2h6zn", 3, 1767225706000, &syncproto.RunEventData{Run: "r2h6zn", Task: "18a2b3c4d5e6f70a", Attempt: 1}),
		ev("suggestion.created", "doc:d1", 102, 1767225702100, &syncproto.SuggestionEventData{ID: "s7kp2d", Doc: "d1", Run: run,
			Status: "pending", Scope: scope, Base: "v1.r4", Ops: 1, Summary: "2 edits by the editing rules"}),
		ev("suggestion.created", "doc:d1", 131, 1767225800000, &syncproto.SuggestionEventData{ID: "s3na7q", Doc: "d1",
			Status: "pending", Scope: scope, Base: "v1.r7", Ops: 1, Summary: "shorter", Actor: "agent claude-desktop 1.2 (token 0123456789ab of author-a)",
			Agent: &syncproto.SuggestionAgent{Client: "claude-desktop", ClientVersion: "1.2", Token: "0123456789ab", User: "author-a"}}),
		ev("suggestion.accepted", "doc:d1", 105, 1767225740000, &syncproto.SuggestionEventData{ID: "s7kp2d", Doc: "d1", Run: run,
			Status: "accepted", Actor: "author-a", Version: "v1.r5"}),
		ev("suggestion.accepted", "doc:d1", 121, 1767225790000, &syncproto.SuggestionEventData{ID: "s8bc4t", Doc: "d1", Run: "r7m3qd",
			Status: "accepted", Actor: "author-a", Version: "v1.r7", CarriedFrom: "v1.r4"}),
		ev("suggestion.rejected", "doc:d1", 106, 1767225741000, &syncproto.SuggestionEventData{ID: "s4wq8j", Doc: "d1", Run: "r5t8vr",
			Status: "rejected", Actor: "author-a", Reason: "keep my wording"}),
		ev("suggestion.conflicted", "doc:d1", 108, 1767225750000, &syncproto.SuggestionEventData{ID: "s9xz3m", Doc: "d1", Run: "r6k2pw",
			Status: "conflicted", Reason: "its blocks p3 changed (a draft save)", Blocks: []string{"p3"}, By: "draft"}),
	}
}
