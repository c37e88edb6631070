package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
)

// transcriptTexts is a session's transcript as "role: text" lines.
func transcriptTexts(t *testing.T, st session.Store, key string) []string {
	t.Helper()
	tr, err := st.Transcript(context.Background(), key)
	if err != nil && !errors.Is(err, session.ErrNotFound) {
		t.Fatal(err)
	}
	var out []string
	for _, m := range tr {
		text := m.Text()
		for _, p := range m.Parts {
			if p.Kind == llm.KindImage {
				text += "[image " + p.ImageURL + "]"
			}
		}
		out = append(out, string(m.Role)+": "+text)
	}
	return out
}

// TestRetriedQuestionIsKeptOnce: a turn that failed after its question was stored, retried with
// the same question (as a client resends it), keeps the question once; a new question, or the
// same one asked again after an answer, is kept.
func TestRetriedQuestionIsKeptOnce(t *testing.T) {
	ctx := context.Background()
	st := session.NewMemory()
	r, _ := newRunner(st, &tools{})
	failing := &script{steps: []func(*llm.Request) (*llm.Message, error){func(*llm.Request) (*llm.Message, error) {
		return nil, errors.New("503 overloaded")
	}}}
	if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: failing, Input: []llm.Message{user("hi")}}); err == nil {
		t.Fatal("the failing turn did not fail")
	}
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){answer("hello"), answer("again"), answer("sure")}}
	for _, in := range []string{"hi", "hi", "and now?"} {
		if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: m, Input: []llm.Message{user(in)}}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"user: hi", "assistant: hello", "user: hi", "assistant: again", "user: and now?", "assistant: sure"}
	if diff := cmp.Diff(want, transcriptTexts(t, st, "s")); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
	if got := len(m.reqs[0].Messages); got != 1 {
		t.Errorf("the retry sent %d messages, want the question once", got)
	}
}

// TestLastOfUnansweredQuestionsRetried: two questions in a row failed, and the client retries
// only the second; it is kept once, after the first, and nothing else is dropped.
func TestLastOfUnansweredQuestionsRetried(t *testing.T) {
	failing := func() *script {
		return &script{steps: []func(*llm.Request) (*llm.Message, error){func(*llm.Request) (*llm.Message, error) {
			return nil, errors.New("503 overloaded")
		}}}
	}
	tests := []struct {
		name  string
		retry []string
		want  []string
	}{
		{"the last alone", []string{"a"}, []string{"user: x", "user: a", "assistant: ok"}},
		{"both", []string{"x", "a"}, []string{"user: x", "user: a", "assistant: ok"}},
		{"the last and a new one", []string{"a", "b"}, []string{"user: x", "user: a", "user: b", "assistant: ok"}},
		{"the first alone is a new question", []string{"x"}, []string{"user: x", "user: a", "user: x", "assistant: ok"}},
		{"another question", []string{"c"}, []string{"user: x", "user: a", "user: c", "assistant: ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := session.NewMemory()
			r, _ := newRunner(st, &tools{})
			for _, q := range []string{"x", "a"} {
				if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: failing(), Input: []llm.Message{user(q)}}); err == nil {
					t.Fatal("the failing turn did not fail")
				}
			}
			var in []llm.Message
			for _, q := range tt.retry {
				in = append(in, user(q))
			}
			m := &script{steps: []func(*llm.Request) (*llm.Message, error){answer("ok")}}
			if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: m, Input: in}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, transcriptTexts(t, st, "s")); diff != "" {
				t.Errorf("transcript (-want +got):\n%s", diff)
			}
		})
	}
}

// checking is a model that cannot carry images whose URL is not https, as Anthropic's encoder
// refuses them, and answers otherwise.
type checking struct{ *script }

var errFTP = errors.New("anthropic: image: want a data URL or an https URL")

func (c checking) CheckRequest(req *llm.Request) error {
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p.Kind == llm.KindImage && !strings.HasPrefix(p.ImageURL, "https://") {
				return errFTP
			}
		}
	}
	return nil
}

var _ agent.RequestChecker = checking{}

func withImage(text, url string) llm.Message {
	m := user(text)
	m.Parts = append(m.Parts, llm.Part{Kind: llm.KindImage, ImageURL: url})
	return m
}

// TestUnsendableInputIsNotStored: input the model cannot carry fails its turn with
// ErrUnsendable and the model's reason, nothing of it is stored, and the session goes on.
func TestUnsendableInputIsNotStored(t *testing.T) {
	ctx := context.Background()
	st := session.NewMemory()
	r, _ := newRunner(st, &tools{})
	m := checking{&script{steps: []func(*llm.Request) (*llm.Message, error){answer("a cat"), answer("a dog")}}}
	if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: m, Input: []llm.Message{withImage("what is this?", "https://example.com/cat.png")}}); err != nil {
		t.Fatal(err)
	}
	_, err := r.Run(ctx, agent.Turn{Session: "s", Model: m, Input: []llm.Message{withImage("and this?", "ftp://example.com/x.png")}})
	if !errors.Is(err, agent.ErrUnsendable) || !errors.Is(err, errFTP) {
		t.Fatalf("err = %v, want ErrUnsendable with the model's reason", err)
	}
	if len(m.reqs) != 1 {
		t.Errorf("the model was called %d times, want once: the refused turn sends nothing", len(m.reqs))
	}
	if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("and a dog?")}}); err != nil {
		t.Fatalf("the turn after the refused one: %v", err)
	}
	want := []string{"user: what is this?[image https://example.com/cat.png]", "assistant: a cat", "user: and a dog?", "assistant: a dog"}
	if diff := cmp.Diff(want, transcriptTexts(t, st, "s")); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}

// TestUnsendableHistoryIsNotTheInputsFault: a history the model cannot carry (stored under
// another provider) does not make a plain new question unsendable: the turn goes to the model,
// whose failure it reports, as before.
func TestUnsendableHistoryIsNotTheInputsFault(t *testing.T) {
	ctx := context.Background()
	st := session.NewMemory()
	if _, err := st.Append(ctx, "s", 0, []llm.Message{withImage("old", "ftp://example.com/x.png"), {Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindText, Text: "ok"}}}}); err != nil {
		t.Fatal(err)
	}
	r, _ := newRunner(st, &tools{})
	refused := errors.New("400 invalid image")
	m := checking{&script{steps: []func(*llm.Request) (*llm.Message, error){func(*llm.Request) (*llm.Message, error) { return nil, refused }}}}
	_, err := r.Run(ctx, agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("new question")}})
	if errors.Is(err, agent.ErrUnsendable) || !errors.Is(err, refused) {
		t.Fatalf("err = %v, want the model's own failure", err)
	}
}

// TestQuestionRetriedAfterAToolStepIsKeptOnce: a turn that failed after some of its tool steps
// were stored, retried with the same question, keeps the question once and goes on from the
// results it has.
func TestQuestionRetriedAfterAToolStepIsKeptOnce(t *testing.T) {
	ctx := context.Background()
	st := session.NewMemory()
	r, _ := newRunner(st, &tools{})
	failing := &script{steps: []func(*llm.Request) (*llm.Message, error){
		calls(llm.Part{CallID: "a", Name: "echo", Args: json.RawMessage(`{"x":1}`)}),
		func(*llm.Request) (*llm.Message, error) { return nil, errors.New("503 overloaded") },
	}}
	if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: failing, Input: []llm.Message{user("hi")}}); err == nil {
		t.Fatal("the failing turn did not fail")
	}
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){answer("echoed")}}
	if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("hi")}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"user: hi", "assistant: ", `tool: `, "assistant: echoed"}
	if diff := cmp.Diff(want, transcriptTexts(t, st, "s")); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}
