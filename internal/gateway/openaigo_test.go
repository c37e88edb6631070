package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/gateway"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// The official Go client (openai-go, a test-only dependency) against the API with a real app and
// the scripted model: plain, streamed, Responses, and a client tool round trip in one session.
func TestOpenAIGoClient(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(`{agents: {defaults: {model: "scripted/demo"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"NODMIX_HOME": home, "HOME": home}
	ctx := context.Background()
	a, err := app.New(ctx, app.Options{Getenv: func(k string) string { return env[k] }, Persistent: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(gateway.WithAPI(http.NotFoundHandler(), &gateway.API{Agent: a}))
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))

	plain, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "scripted/demo",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello from go")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.Choices[0].Message.Content; got != "You said: hello from go" || plain.Usage.TotalTokens == 0 {
		t.Errorf("plain = %q, usage %+v", got, plain.Usage)
	}

	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:         "scripted/demo",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("streamed")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "You said: streamed" || acc.Usage.TotalTokens == 0 {
		t.Errorf("stream = %q, usage %+v", got, acc.Usage)
	}

	resp, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "scripted/demo",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("responses from go")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.OutputText(); got != "You said: responses from go" {
		t.Errorf("responses = %q", got)
	}

	// A client tool: the model calls it, the client answers, the same session continues.
	session := option.WithHeader("X-Nodmix-Session", "go-client")
	tools := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
		Name: "get_weather", Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
	})}
	msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage(`use get_weather {"city":"Oslo"}`)}
	first, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "scripted/demo", Messages: msgs, Tools: tools}, session)
	if err != nil {
		t.Fatal(err)
	}
	if first.Choices[0].FinishReason != "tool_calls" || len(first.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("first = %+v", first.Choices[0])
	}
	call := first.Choices[0].Message.ToolCalls[0]
	if call.Function.Name != "get_weather" || call.Function.Arguments != `{"city":"Oslo"}` {
		t.Errorf("call = %+v", call)
	}
	msgs = append(msgs, first.Choices[0].Message.ToParam(), openai.ToolMessage("rain", call.ID))
	second, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "scripted/demo", Messages: msgs, Tools: tools}, session)
	if err != nil {
		t.Fatal(err)
	}
	if got := second.Choices[0].Message.Content; got != "get_weather returned: rain" {
		t.Errorf("after the tool result: %q", got)
	}

	_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o", Messages: msgs})
	var apiErr *openai.Error
	if !asError(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "invalid_model" {
		t.Errorf("bad model: %v", err)
	}
}

func asError(err error, target **openai.Error) bool {
	e, ok := err.(*openai.Error)
	if ok {
		*target = e
	}
	return ok
}
