package mcpserve

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzScreenBody: any JSON body a client posts is screened without a panic, and a refusal is one
// of those the face answers itself, Invalid Request, Method Not Found or Invalid Params, with a
// message; a batch
// the face trims is still a JSON array.
func FuzzScreenBody(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/whatever"}`,
		`[{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"clientInfo":{"icons":[{"src":1}]}}}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":5}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"nope"}`,
		`[]`, `null`, `"x"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) {
			return
		}
		sc := screenBody([]byte(body))
		if r := sc.refusal; r != nil {
			switch {
			case r.code != jsonrpc.CodeInvalidRequest && r.code != jsonrpc.CodeInvalidParams && r.code != jsonrpc.CodeMethodNotFound,
				r.message == "":
				t.Fatalf("screenBody(%q) refused with %d %q", body, r.code, r.message)
			}
		}
		if sc.keep != nil && !json.Valid(sc.keep) {
			t.Fatalf("screenBody(%q) kept %q, not JSON", body, sc.keep)
		}
	})
}
