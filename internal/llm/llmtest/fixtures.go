package llmtest

import (
	"encoding/json"

	"github.com/nodmix/nodmix/internal/llm"
)

// WeatherSchema is the input schema of the weather tool ToolLoop calls.
var WeatherSchema = json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)

// ToolLoop is a whole tool loop: a question with an image, an answer that calls two tools at
// once, their results (one with an image), and the final answer.
func ToolLoop() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{
			{Kind: llm.KindText, Text: "Weather in Paris and Rome? <compare> & tell me"},
			{Kind: llm.KindImage, ImageURL: "data:image/png;base64,iVBORw0KGgo="},
		}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Kind: llm.KindText, Text: "Checking both."},
			{Kind: llm.KindToolCall, CallID: "call_a", Name: "weather", Args: json.RawMessage(`{"city":"Paris"}`)},
			{Kind: llm.KindToolCall, CallID: "call_b", Name: "weather", Args: json.RawMessage(`{"city":"Rome"}`)},
		}},
		{Role: llm.RoleTool, Parts: []llm.Part{
			{Kind: llm.KindToolResult, CallID: "call_a", Name: "weather", Text: "18°C, cloudy"},
			{Kind: llm.KindToolResult, CallID: "call_b", Name: "weather", Text: "upstream timeout", IsError: true},
			{Kind: llm.KindImage, ImageURL: "https://example.com/rome.png"},
		}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindText, Text: "Paris is 18°C; Rome did not answer."}}},
		{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "Thanks"}}},
	}
}
