package gemini

import "encoding/json"

// The wire structs of generateContent, hand-written from the v1beta REST reference. Only what
// nodmix reads or writes is modelled: unknown response fields are ignored, and request fields
// nodmix does not set reach the body through Request.Extra or the patch.

type request struct {
	Contents          []content       `json:"contents"`
	SystemInstruction *content        `json:"systemInstruction,omitempty"`
	Tools             []tool          `json:"tools,omitempty"`
	ToolConfig        *toolConfig     `json:"toolConfig,omitempty"`
	GenerationConfig  json.RawMessage `json:"generationConfig,omitempty"` // a generationConfig, merged with Extra's
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

// part is one Part of a Content. Text is a pointer so that a part that carries only a
// signature is sent back as it came, `{"text":"","thoughtSignature":…}`.
type part struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FileData         *fileData         `json:"fileData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

type blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"` // base64
}

type fileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response responseObject `json:"response"`
}

// responseObject is a tool result as Gemini takes it: a JSON object, `{"result": text}` for a
// success and `{"error": text}` for a failure (the keys the API reference suggests).
type responseObject struct {
	Result *string `json:"result,omitempty"`
	Error  *string `json:"error,omitempty"`
}

type tool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

// functionDeclaration sends the schema in parametersJsonSchema, which takes JSON Schema as
// written ($ref, anyOf, additionalProperties, …). The older `parameters` field takes only
// Gemini's OpenAPI subset and refuses common MCP schemas with a 400.
type functionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type toolConfig struct {
	FunctionCallingConfig functionCallingConfig `json:"functionCallingConfig"`
}

type functionCallingConfig struct {
	Mode string `json:"mode"` // AUTO, ANY, NONE
}

type generationConfig struct {
	MaxOutputTokens int      `json:"maxOutputTokens,omitempty"`
	Temperature     *float64 `json:"temperature,omitempty"`
}

// response is one GenerateContentResponse: the whole answer, or one chunk of a stream.
type response struct {
	Candidates     []candidate     `json:"candidates"`
	PromptFeedback *promptFeedback `json:"promptFeedback"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata"`
	Error          *apiError       `json:"error"`
}

type candidate struct {
	Content      *content `json:"content"`
	FinishReason string   `json:"finishReason"`
	Index        int      `json:"index"`
}

type promptFeedback struct {
	BlockReason string `json:"blockReason"`
}

type usageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
}

type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

// meta is what a Part's Meta holds for Gemini: the part's thoughtSignature, and the call id
// when Gemini gave one (it then expects it back on the call and on its functionResponse).
type meta struct {
	ThoughtSignature string `json:"thoughtSignature,omitempty"`
	ID               string `json:"id,omitempty"`
}
