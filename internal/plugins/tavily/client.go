package tavily

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Labels that start every API error, as the reference words them.
const (
	labelSearch  = "Tavily Search"
	labelExtract = "Tavily Extract"
)

const (
	maxResponseBytes = 16 << 20 // a 20-URL advanced extract is a few MB at most
	maxDetailRunes   = 2000     // of an error body shown to the model
	clientSource     = "nodmix" // X-Client-Source: who is calling, for Tavily's support
)

// retryPolicy bounds what a call may spend on retries: only 429 and 5xx are retried, at most
// attempts-1 times, waiting retry-after (when given and not above maxRetryAfter) or an exponential
// backoff from base, capped at max.
type retryPolicy struct {
	attempts      int
	base, max     time.Duration
	maxRetryAfter time.Duration
}

func defaultRetry() retryPolicy {
	return retryPolicy{attempts: 3, base: 500 * time.Millisecond, max: 8 * time.Second, maxRetryAfter: 60 * time.Second}
}

// apiClient posts JSON to Tavily. It is safe for concurrent use; its fields are set at Init.
type apiClient struct {
	http  *http.Client
	log   *slog.Logger
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	retry retryPolicy
}

// apiError is a non-2xx answer from Tavily, worded for the model: what Tavily said and what to do.
type apiError struct {
	label  string
	status int
	detail string
	hint   string
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("%s API error (%d): %s", e.label, e.status, e.detail)
	if e.hint != "" {
		msg += " " + e.hint
	}
	return msg
}

// post sends body to endpoint and returns the decoded JSON object. timeout bounds each attempt.
// Errors are worded for the model and never contain key; a cancelled ctx returns ctx's error.
func (c *apiClient) post(ctx context.Context, label, endpoint, key string, body []byte, timeout time.Duration) (map[string]json.RawMessage, error) {
	for attempt := 1; ; attempt++ {
		status, header, data, err := c.once(ctx, label, endpoint, key, body, timeout)
		if err != nil {
			return nil, err
		}
		if status >= 200 && status < 300 {
			// An answer can carry the key (a page where it was published, a proxy echoing the
			// request); the model is not to see it there either. A key JSON would escape cannot
			// appear as such, and replacing it could break the document.
			if key != "" && !strings.ContainsAny(key, "\"\\") {
				data = bytes.ReplaceAll(data, []byte(key), []byte("[REDACTED]"))
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal(data, &obj) != nil || obj == nil {
				return nil, fmt.Errorf("%s: malformed JSON response", label)
			}
			return obj, nil
		}
		e := &apiError{label: label, status: status, detail: errorDetail(status, data, key)}
		retryable := status == http.StatusTooManyRequests || status >= 500 && status <= 599
		if !retryable {
			e.hint = hintFor(status)
			return nil, e
		}
		wait := c.retry.backoff(attempt)
		if ra, ok := retryAfter(header.Get("Retry-After"), c.now()); ok {
			if ra > c.retry.maxRetryAfter {
				e.hint = fmt.Sprintf("Tavily asked to wait %d s before retrying; try again later.", int(ra.Round(time.Second)/time.Second))
				return nil, e
			}
			wait = ra
		}
		if attempt >= c.retry.attempts {
			e.hint = exhaustedHint(status, attempt)
			return nil, e
		}
		c.log.Warn("tavily request will be retried", "op", label, "status", status, "attempt", attempt, "wait", wait)
		if err := c.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// once makes one attempt. A transport failure comes back as an error; any HTTP answer as a status.
func (c *apiClient) once(ctx context.Context, label, endpoint, key string, body []byte, timeout time.Duration) (int, http.Header, []byte, error) {
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s: cannot build the request: %s", label, redact(transportCause(err), key))
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Client-Source", clientSource)

	start := c.now()
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, c.transportError(ctx, actx, label, key, timeout, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return 0, nil, nil, c.transportError(ctx, actx, label, key, timeout, err)
	}
	c.log.Debug("tavily request", "op", label, "endpoint", redactedURL(endpoint), "status", resp.StatusCode,
		"bytes", len(data), "duration", c.now().Sub(start))
	if len(data) > maxResponseBytes {
		return 0, nil, nil, fmt.Errorf("%s: response larger than %d MB", label, maxResponseBytes>>20)
	}
	return resp.StatusCode, resp.Header, data, nil
}

func (c *apiClient) transportError(ctx, actx context.Context, label, key string, timeout time.Duration, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) || actx.Err() != nil {
		return fmt.Errorf("%s request timed out after %d s.", label, int(timeout/time.Second))
	}
	cause := redact(transportCause(err), key)
	c.log.Debug("tavily request failed", "op", label, "err", cause)
	return fmt.Errorf("%s request failed: %s", label, cause)
}

// transportCause drops the *url.Error wrapper, whose text repeats the URL.
func transportCause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

func (p retryPolicy) backoff(attempt int) time.Duration {
	d := p.base
	for i := 1; i < attempt && d < p.max; i++ {
		d *= 2
	}
	return min(d, p.max)
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n < 0 || n != n {
			return 0, false
		}
		if n > 1e6 {
			n = 1e6
		}
		return time.Duration(n * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// errorDetail applies the parsing rule for Tavily error bodies: detail.error, then the keyless
// envelope's error.message, then a plain detail string, then the raw body, then the status text.
func errorDetail(status int, body []byte, key string) string {
	var env struct {
		Detail json.RawMessage `json:"detail"`
		Error  json.RawMessage `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &env) == nil {
		var d struct {
			Error string `json:"error"`
		}
		var e struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(env.Detail, &d) == nil && strings.TrimSpace(d.Error) != "":
			msg = d.Error
		case json.Unmarshal(env.Error, &e) == nil && strings.TrimSpace(e.Message) != "":
			msg = e.Message
		case json.Unmarshal(env.Detail, &s) == nil && strings.TrimSpace(s) != "":
			msg = s
		}
	}
	if strings.TrimSpace(msg) == "" {
		msg = string(body)
	}
	msg = strings.TrimSpace(redact(msg, key))
	if msg == "" {
		msg = http.StatusText(status)
	}
	if r := []rune(msg); len(r) > maxDetailRunes {
		msg = string(r[:maxDetailRunes]) + "..."
	}
	return msg
}

func hintFor(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "Check the Tavily API key (plugins.entries.tavily.config.webSearch.apiKey or TAVILY_API_KEY); retrying will not help."
	case 432:
		return "The Tavily plan or key usage limit is used up: raise the key limit or upgrade the plan on the Tavily dashboard (https://app.tavily.com). Retrying will not help."
	case 433:
		return "The Tavily pay-as-you-go limit is reached: raise it on the Tavily dashboard (https://app.tavily.com). Retrying will not help."
	}
	return ""
}

func exhaustedHint(status, attempts int) string {
	if status == http.StatusTooManyRequests {
		return fmt.Sprintf("Still rate limited after %d attempts; wait a minute before searching again.", attempts)
	}
	return fmt.Sprintf("Tavily kept failing after %d attempts; try again later.", attempts)
}

// keyLike matches Tavily keys, so that a key echoed in an error body is removed even when it is not
// the one this call sent.
var keyLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`tvly-[A-Za-z0-9_-]{4,}`) })

// redact removes the key (and anything that looks like a Tavily key) from text shown to anyone.
func redact(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "[REDACTED]")
	}
	return keyLike().ReplaceAllString(s, "[REDACTED]")
}

// redactedURL is the endpoint for logs: without the password of a proxy's user info.
func redactedURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(invalid URL)"
	}
	return u.Redacted()
}

// sleepCtx waits for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
