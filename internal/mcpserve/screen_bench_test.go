package mcpserve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkScreenPost is what the HTTP face's screening costs a tools/call of an open session,
// before the SDK reads the body: the body read and put back, and the checks of its id and
// method. The SDK's own reading of the body is counted too, since the face's putting back
// decides what it costs.
func BenchmarkScreenPost(b *testing.B) {
	const body = `{"jsonrpc":"2.0","id":1234,"method":"tools/call","params":{"name":"mcp__everything__echo","arguments":{"message":"x"}}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Content-Type", "application/json")
	r.ContentLength = int64(len(body))
	in := &closingReader{}
	b.ReportAllocs()
	for b.Loop() {
		in.Reset(body)
		r.Body = in
		if post := screenPost(r, DefaultMaxMessageBytes); post.kind != postOther {
			b.Fatalf("screenPost = %v", post.kind)
		}
		if data, err := io.ReadAll(r.Body); err != nil || string(data) != body {
			b.Fatalf("body put back: %q, %v", data, err)
		}
	}
}

type closingReader struct{ strings.Reader }

func (*closingReader) Close() error { return nil }
