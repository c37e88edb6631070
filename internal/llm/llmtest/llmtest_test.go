package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
)

func TestEncodedJSON(t *testing.T) {
	enc := &llm.Encoded{
		Path:   "/chat/completions",
		Header: http.Header{"X-B": {"2"}, "Content-Type": {"application/json"}},
		Body:   []byte(`{"z":1,"a":{"t":"<b> & c"},"l":[]}`),
	}
	want := `{
  "path": "/chat/completions",
  "header": {
    "Content-Type": [
      "application/json"
    ],
    "X-B": [
      "2"
    ]
  },
  "body": {
    "z": 1,
    "a": {
      "t": "<b> & c"
    },
    "l": []
  }
}
`
	if diff := cmp.Diff(want, string(EncodedJSON(t, enc))); diff != "" {
		t.Errorf("EncodedJSON (-want +got):\n%s", diff)
	}
}

func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.json")
	Golden(t, path, []byte("one\n"), true)
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "one\n" {
		t.Fatalf("update wrote %q, %v", b, err)
	}
	Golden(t, path, []byte("one\n"), false) // equal: passes
}

func TestRender(t *testing.T) {
	evs := []llm.Event{
		{Kind: llm.EventText, Text: "a<b"},
		{Kind: llm.EventToolCall, Index: 0, CallID: "c", Name: "f"},
		{Kind: llm.EventToolArgs, Index: 0, Text: "{}"},
	}
	got := Render(evs, fmt.Errorf("x: %w", llm.ErrTruncated))
	want := `{"kind":"text","text":"a<b"}
{"kind":"tool_call","index":0,"call_id":"c","name":"f"}
{"kind":"tool_args","text":"{}","index":0}
{"error":"ErrTruncated"}
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Render (-want +got):\n%s", diff)
	}
	for err, want := range map[error]string{
		fmt.Errorf("read: %w", llm.ErrLineTooLong):           "ErrLineTooLong",
		&llm.StreamError{Type: "rate", Message: "slow down"}: `StreamError type="rate" message="slow down"`,
		errors.New("boom"): "error: boom",
	} {
		if got := ErrView(err); got != want {
			t.Errorf("ErrView(%v) = %q, want %q", err, got, want)
		}
	}
}

func TestCollect(t *testing.T) {
	seq := func(yield func(llm.Event, error) bool) {
		if yield(llm.Event{Kind: llm.EventText, Text: "x"}, nil) {
			yield(llm.Event{Kind: llm.EventDone, Message: &llm.Message{Role: llm.RoleAssistant}}, nil)
		}
	}
	evs, err := Collect(t, seq)
	if err != nil || len(evs) != 2 || evs[1].Kind != llm.EventDone {
		t.Errorf("Collect = %+v, %v", evs, err)
	}
}

// echoDialect sends the model id and decodes a body as one text part.
type echoDialect struct{}

var _ llm.Dialect = echoDialect{}

func (echoDialect) Name() string { return "echo" }
func (echoDialect) Encode(req *llm.Request, p llm.Patch) (*llm.Encoded, error) {
	b, err := json.Marshal(req.Model)
	if err != nil {
		return nil, err
	}
	return &llm.Encoded{Path: "/echo", Header: http.Header{"Content-Type": {"application/json"}}, Body: b}, nil
}
func (echoDialect) Decode(r io.Reader, stream bool) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		b, err := io.ReadAll(r)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		yield(llm.Event{Kind: llm.EventDone, Message: &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindText, Text: string(b)}}}}, nil)
	}
}

func TestReplay(t *testing.T) {
	enc, _ := echoDialect{}.Encode(&llm.Request{Model: "m"}, llm.Patch{})
	stream := []byte(strings.Repeat("data: piece\n\n", 40))
	resp := Replay(t, enc, "/v1", "text/event-stream", stream)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	evs, err := Collect(t, echoDialect{}.Decode(resp.Body, true))
	if err != nil || evs[0].Message.Text() != string(stream) {
		t.Errorf("replayed %+v, %v", evs, err)
	}
	CheckSendBack(t, echoDialect{}, evs[0])
}

func TestStepAndReload(t *testing.T) {
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(append([]byte("asked "), b...))
	}))
	defer srv.Close()
	ev := Step(t, echoDialect{}, srv.URL, "/v2", &llm.Request{Model: "m"}, llm.Patch{})
	if path != "/v2/echo" || ev.Kind != llm.EventDone || ev.Message.Text() != `asked "m"` {
		t.Errorf("step to %q: %+v", path, ev.Message)
	}
	msg := &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindToolCall, CallID: "c", Name: "f", Args: json.RawMessage(`{"a":1}`), Meta: json.RawMessage(`{"id":"x"}`)}}}
	back := Reload(t, msg)
	if diff := cmp.Diff(*msg, back); diff != "" {
		t.Errorf("reloaded (-before +after):\n%s", diff)
	}
}

// recorder is a testing.TB that records failures instead of reporting them.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestGoldenDiffers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Golden(r, path, []byte("two\n"), false)
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], `"one\n"`) || !strings.Contains(r.errors[0], `"two\n"`) {
		t.Errorf("a differing golden file reported %q", r.errors)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "one\n" {
		t.Errorf("without update the file changed to %q", b)
	}
}
