package server

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"testing"
)

func upload(t *testing.T, e *env, token, name, content string) (int, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write([]byte(content))
	mw.Close()
	req, _ := http.NewRequest("POST", e.ts.URL+"/v1/docs/import", &buf)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out bytes.Buffer
	out.ReadFrom(res.Body)
	return res.StatusCode, out.Bytes()
}

// A Markdown upload becomes a document owned by the uploader, titled by
// its first heading, with what had no block listed as notes; a file that
// is neither Markdown nor a FlowDocument is refused with a reason.
func TestImportUpload(t *testing.T) {
	e := newEnv(t, nil)
	code, body := upload(t, e, e.ann, "notes.md", "# Field notes\n\nSome *text* and <span>inline html</span>.\n")
	if code != http.StatusCreated {
		t.Fatalf("import: %d %s", code, body)
	}
	var res ImportResponse
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if res.Title != "Field notes" || res.Version.Label != "v1.r0" || len(res.Notes) == 0 || res.Notes[0].Kind == "" {
		t.Fatalf("import answered %s", body)
	}
	if code, _ := e.call("GET", "/v1/docs/"+res.Doc, e.ann, nil); code != 200 {
		t.Fatalf("the imported document is not the uploader's: %d", code)
	}
	if code, _ := e.call("GET", "/v1/docs/"+res.Doc, e.bob, nil); code != 404 {
		t.Fatalf("another author reaches the imported document: %d", code)
	}
	code, body = upload(t, e, e.ann, "doc.json", `{"schemaVersion":1,"blocks":[{"id":"p1","type":"paragraph","richText":[{"text":"Hi"}]}]}`)
	if code != http.StatusCreated {
		t.Fatalf("import of a FlowDocument: %d %s", code, body)
	}
	if code, body = upload(t, e, e.ann, "picture.png", "\x89PNG"); code != 400 || !bytes.Contains(body, []byte("neither a FlowDocument")) {
		t.Fatalf("import of a PNG: %d %s", code, body)
	}
}
