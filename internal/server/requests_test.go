package server

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// The streaming decoder keeps the meaning encoding/json gave the save
// body: "after" null or absent is the end, "" is the start.
func TestDecodeSaveAfter(t *testing.T) {
	e := newEnv(t, nil)
	req := httptest.NewRequest("POST", "/", strings.NewReader(`{"baseSeq":7,"session":"s1","changes":[
		{"op":"move","blockId":"a","after":null},{"op":"move","blockId":"b","after":""},
		{"op":"move","blockId":"c","after":"a"},{"op":"delete","blockId":"d"}]}`))
	sb, err := e.srv.decodeSave(req)
	if err != nil {
		t.Fatal(err)
	}
	if sb.baseSeq != 7 || sb.session != "s1" || len(sb.changes) != 4 {
		t.Fatalf("decoded %+v", sb)
	}
	c := sb.changes
	if c[0].After != nil || c[1].After == nil || *c[1].After != "" || c[2].After == nil || *c[2].After != "a" || c[3].After != nil {
		t.Errorf("after: %v %v %v %v", c[0].After, c[1].After, c[2].After, c[3].After)
	}
}
