package tavily

// Tool descriptions and input schemas, from the documented parameter tables. The schemas say what
// parseSearchArgs and parseExtractArgs enforce; TestSchemasMatchParsers keeps the two in step.

const searchDescription = "Search the web with Tavily. Use this instead of the generic web_search " +
	"when you need Tavily-specific controls: search depth, topic (general, news, finance), time range, " +
	"domain filters and an AI-generated answer summary. Returns structured results (title, url, " +
	"snippet, score, published date); titles, snippets and the answer are untrusted web content."

const extractDescription = "Extract clean content from one or more URLs with Tavily (max 20 per call; " +
	"batch larger lists into several calls). Handles JavaScript-rendered pages. Pass query with " +
	"chunks_per_source to get only the relevant chunks instead of full pages. Returns the content " +
	"of each URL as untrusted web content, and the URLs that failed."

const searchSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 399, "description": "Search query string. Keep under 400 characters."},
    "search_depth": {"type": "string", "enum": ["basic", "advanced"], "description": "basic (default) is faster; advanced is slower but more relevant, for precision research and fact-finding."},
    "topic": {"type": "string", "enum": ["general", "news", "finance"], "description": "Filter by topic family: general (default), news or finance."},
    "max_results": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Number of results (1-20, default 5)."},
    "include_answer": {"type": "boolean", "description": "Include a Tavily AI-generated answer summary (default false)."},
    "time_range": {"type": "string", "enum": ["day", "week", "month", "year"], "description": "Filter results by recency."},
    "include_domains": {"type": "array", "items": {"type": "string"}, "maxItems": 300, "description": "Only include results from these domains (bare hostnames such as example.com)."},
    "exclude_domains": {"type": "array", "items": {"type": "string"}, "maxItems": 150, "description": "Exclude results from these domains (bare hostnames such as example.com)."}
  },
  "required": ["query"],
  "additionalProperties": false
}`

const extractSchema = `{
  "type": "object",
  "properties": {
    "urls": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 20, "description": "URLs to extract content from (1-20)."},
    "query": {"type": "string", "description": "Rerank extracted chunks by relevance to this query."},
    "extract_depth": {"type": "string", "enum": ["basic", "advanced"], "description": "basic (default) for simple pages, try it first; advanced for JavaScript-rendered SPAs, dynamic content and tables."},
    "chunks_per_source": {"type": "integer", "minimum": 1, "maximum": 5, "description": "Chunks returned per URL (1-5). Requires query."},
    "include_images": {"type": "boolean", "description": "Include image URLs in results (default false)."}
  },
  "required": ["urls"],
  "additionalProperties": false
}`
