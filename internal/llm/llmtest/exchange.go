package llmtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/nodmix/nodmix/internal/llm"
)

// Replay sends enc over HTTP to a server that answers with stream, the way a provider streams:
// written in pieces of 97 bytes (which cut lines and events), each flushed. The server answers
// 400 unless the request arrives as sent: a POST to prefix+enc.Path with enc's headers and
// body. Replay fails the test on any status but 200; the response is closed, and the server
// stopped, when the test ends.
func Replay(t testing.TB, enc *llm.Encoded, prefix, contentType string, stream []byte) *http.Response {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != prefix+enc.Path {
			http.Error(w, "bad request line", http.StatusBadRequest)
			return
		}
		for k := range enc.Header {
			if got, want := r.Header.Values(k), enc.Header.Values(k); !slices.Equal(got, want) {
				http.Error(w, "header "+k+" changed in transit", http.StatusBadRequest)
				return
			}
		}
		if !bytes.Equal(body, enc.Body) {
			http.Error(w, "body changed in transit", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", contentType)
		for rest := stream; len(rest) > 0; {
			n := min(len(rest), 97)
			_, _ = w.Write(rest[:n])
			w.(http.Flusher).Flush()
			rest = rest[n:]
		}
	}))
	t.Cleanup(srv.Close)

	hr, err := http.NewRequest(http.MethodPost, srv.URL+prefix+enc.Path, bytes.NewReader(enc.Body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header = enc.Header.Clone()
	resp, err := srv.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return resp
}

// BenchDecode measures d decoding data (a stream when stream is true), failing on any error,
// and returns the last EventDone for the benchmark to check what was assembled.
func BenchDecode(b *testing.B, d llm.Dialect, data []byte, stream bool) llm.Event {
	b.Helper()
	var done llm.Event
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for ev, err := range d.Decode(bytes.NewReader(data), stream) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == llm.EventDone {
				done = ev
			}
		}
	}
	return done
}

// BenchEncode measures d encoding req with p, failing on any error.
func BenchEncode(b *testing.B, d llm.Dialect, req *llm.Request, p llm.Patch) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Encode(req, p); err != nil {
			b.Fatal(err)
		}
	}
}

// Step runs one model call as the provider layer would: req encoded with p on d, POSTed to
// base+prefix+enc.Path, and the answer decoded (a stream when req.Stream is set) and held to
// the Dialect contract. It fails the test on any error and returns the EventDone.
func Step(t testing.TB, d llm.Dialect, base, prefix string, req *llm.Request, p llm.Patch) llm.Event {
	t.Helper()
	enc, err := d.Encode(req, p)
	if err != nil {
		t.Fatal(err)
	}
	hr, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+prefix+enc.Path, bytes.NewReader(enc.Body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header = enc.Header.Clone()
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	evs, err := Collect(t, d.Decode(resp.Body, req.Stream))
	if err != nil {
		t.Fatal(err)
	}
	return evs[len(evs)-1]
}

// Reload is msg after a trip through JSON, the form the session store keeps it in: what a
// dialect sends back on the next step must survive it.
func Reload(t testing.TB, msg *llm.Message) llm.Message {
	t.Helper()
	stored, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	var back llm.Message
	if err := json.Unmarshal(stored, &back); err != nil {
		t.Fatal(err)
	}
	return back
}
