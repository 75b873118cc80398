package client_test

import (
	"context"
	"fmt"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
	"github.com/foliodev/folio/syncproto/synctest"
)

// An editor opens a document, saves a change and sees another editor's.
func Example() {
	env, err := synctest.Start(synctest.Options{})
	if err != nil {
		panic(err)
	}
	defer env.Close()
	env.Auth.Add("secret", "alice", false)
	env.CreateDoc("notes", "alice", flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
		{ID: "p1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "Draft"}}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	seen := make(chan syncproto.DraftUpdated, 1)
	ed, err := client.Dial(ctx, env.URL, client.Options{Token: "secret", OnEvent: func(e *syncproto.Event) {
		var du syncproto.DraftUpdated
		if e.Type == syncproto.TypeDraftUpdated && e.DecodeData(&du) == nil {
			seen <- du
		}
	}})
	if err != nil {
		panic(err)
	}
	defer ed.Close()
	snap, err := ed.Open(ctx, "notes")
	if err != nil {
		panic(err)
	}
	fmt.Println("opened at seq", snap.Seq, "head", snap.Head)

	// Another editor (a second connection) changes the block.
	other, err := client.Dial(ctx, env.URL, client.Options{Token: "secret", Subprotocol: syncproto.SubprotocolJSON})
	if err != nil {
		panic(err)
	}
	defer other.Close()
	if _, err := other.Open(ctx, "notes"); err != nil {
		panic(err)
	}
	b := flowdoc.Block{ID: "p1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "Second draft"}}}
	ack, err := other.Save(ctx, "notes", snap.Seq, syncproto.Change{Op: "upsert", Block: &b})
	if err != nil {
		panic(err)
	}
	fmt.Println("acknowledged seq", ack.Seq)

	du := <-seen
	fmt.Println("the first editor sees seq", du.Seq, "block", du.Blocks[0].ID, "=", du.Blocks[0].Block.RichText[0].Text)

	// Resume point for a reconnect:
	cursor, _ := ed.Cursor("doc:notes")
	fmt.Println("resume after cursor", cursor)
	// Output:
	// opened at seq 1 head v1.r0
	// acknowledged seq 2
	// the first editor sees seq 2 block p1 = Second draft
	// resume after cursor 2
}
