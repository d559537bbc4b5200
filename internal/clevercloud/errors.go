package clevercloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// APIError is a non-2xx answer of the Clever Cloud API.
type APIError struct {
	StatusCode int
	Method     string
	// Route is the route template, e.g. "/v2/organisations/{ownerId}/addons/{addonId}",
	// so messages stay short and stable.
	Route string
	// ID, Message and Type come from the {id, message, type} body (clever-cloud-api.md §4.3).
	// ID is signed: the API answers -500 for provider errors. For v4-style bodies
	// ({code, error}), Message is `error` and Type is `code`.
	ID      int64
	Message string
	Type    string
	// Fields holds per-field validation reasons when the body has "fields".
	Fields map[string]string
	// RetryAfter is parsed from the Retry-After header (seconds or HTTP date) when present.
	RetryAfter time.Duration
}

// Error returns e.g.
// `clever cloud API: GET /v2/organisations/{ownerId}/addons/{addonId}: 404 Not Found: <message> (id 4004)`.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("clever cloud API: ")
	b.WriteString(e.Method)
	b.WriteByte(' ')
	b.WriteString(e.Route)
	b.WriteString(": ")
	b.WriteString(strconv.Itoa(e.StatusCode))
	if t := http.StatusText(e.StatusCode); t != "" {
		b.WriteByte(' ')
		b.WriteString(t)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.ID != 0 {
		b.WriteString(" (id ")
		b.WriteString(strconv.FormatInt(e.ID, 10))
		b.WriteByte(')')
	}
	return b.String()
}

// RequestError is a failure that is not an HTTP answer: transport error, timeout,
// unreadable or undecodable response, local rate limiter refusal.
// Err is wrapped (errors.Is/As see through it); it never contains credentials nor
// environment variable values.
type RequestError struct {
	Method string
	Route  string // route template
	Op     string // what failed, e.g. "sending request", "decoding response"
	Err    error
	// RetryAfter is, for a request refused because the circuit is open, how long it stays open.
	RetryAfter time.Duration
}

// RetryDelay is how long to wait before trying again when the error says so: a 429's or
// 503's Retry-After, or the rest of an open circuit's cooldown; 0 when it does not say.
func RetryDelay(err error) time.Duration {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.RetryAfter
	}
	var re *RequestError
	if errors.As(err, &re) {
		return re.RetryAfter
	}
	return 0
}

func (e *RequestError) Error() string {
	msg := "clever cloud API: " + e.Method + " " + e.Route + ": " + e.Op
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *RequestError) Unwrap() error { return e.Err }

// RequestError.Op values.
const (
	opBuild   = "building request"
	opEncode  = "encoding request body"
	opSign    = "signing request"
	opWait    = "waiting for rate limiter"
	opSend    = "sending request"
	opCircuit = "circuit breaker"
	opRead    = "reading response"
	opDecode  = "decoding response"
)

// errRateLimiterWait is wrapped when the client-side limiter cannot grant a token
// before the context deadline.
var errRateLimiterWait = errors.New("client-side rate limit would exceed the context deadline")

// decodeError is a response (or request) body that could not be (de)serialised;
// it is not retryable. Its message never quotes an env route's body.
type decodeError struct{ msg string }

func (e *decodeError) Error() string { return e.msg }

// IsConflict reports a 409 (e.g. a migration already running).
func IsConflict(err error) bool { return statusIs(err, http.StatusConflict) }

// IsNotFound reports whether err is (or wraps) a 404 APIError.
func IsNotFound(err error) bool { return statusIs(err, http.StatusNotFound) }

// IsUnauthorized reports whether err is (or wraps) a 401 or 403 APIError.
func IsUnauthorized(err error) bool {
	return statusIs(err, http.StatusUnauthorized, http.StatusForbidden)
}

// IsBadRequest reports whether err is (or wraps) a 400 or 422 APIError.
func IsBadRequest(err error) bool {
	return statusIs(err, http.StatusBadRequest, http.StatusUnprocessableEntity)
}

// IsRetryable reports whether trying again later may succeed: 408, 429 and 5xx
// answers, network errors and timeouts (including a per-attempt timeout), and the
// client-side rate limiter refusing to wait past the deadline. It is false when the
// caller's context was canceled, for other 4xx and for undecodable 2xx bodies.
func IsRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var de *decodeError
	if errors.As(err, &de) {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.StatusCode == http.StatusRequestTimeout ||
			ae.StatusCode == http.StatusTooManyRequests ||
			ae.StatusCode >= 500
	}
	if errors.Is(err, errRateLimiterWait) || errors.Is(err, ErrCircuitOpen) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var re *RequestError
	if errors.As(err, &re) && (re.Op == opSend || re.Op == opRead) {
		return true // any transport failure (reset, EOF, HTTP/2 GOAWAY, TLS...)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE)
}

func statusIs(err error, codes ...int) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return false
	}
	for _, c := range codes {
		if ae.StatusCode == c {
			return true
		}
	}
	return false
}

// requestNotSent reports whether err proves that nothing reached the server:
// the connection could not even be established (refused, DNS failure, dial timeout).
func requestNotSent(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return true
	}
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) || errors.Is(err, syscall.ECONNREFUSED)
}

// errorBody covers both v2 ({id, message, type, fields}) and v4
// ({apiRequestId, code, error}) error bodies (clever-cloud-api-more.md §6.2).
type errorBody struct {
	ErrorBody
	Code  string `json:"code"`
	Error string `json:"error"`
}

const (
	maxJSONMessage    = 500
	maxNonJSONMessage = 200
)

// newAPIError builds an APIError from a non-2xx answer. When sensitive is true
// (env routes) a body that is not the JSON error shape is never echoed.
// redact lists values (credentials, variable values) that are masked if the server echoes them.
func newAPIError(method, route string, status int, header http.Header, body []byte, now time.Time, sensitive bool, redact []string) *APIError {
	e := &APIError{StatusCode: status, Method: method, Route: route}
	e.RetryAfter = parseRetryAfter(header.Get("Retry-After"), now)

	var eb errorBody
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "{") && json.Unmarshal(body, &eb) == nil &&
		(eb.ID != 0 || eb.Message != "" || eb.Type != "" || eb.Error != "" || eb.Code != "") {
		e.ID = eb.ID
		e.Message = eb.Message
		if e.Message == "" {
			e.Message = eb.Error
		}
		e.Type = eb.Type
		if e.Type == "" {
			e.Type = eb.Code
		}
		e.Message = truncate(sanitize(redactAll(e.Message, redact)), maxJSONMessage)
		if len(eb.Fields) > 0 {
			e.Fields = make(map[string]string, len(eb.Fields))
			for k, v := range eb.Fields {
				e.Fields[k] = truncate(sanitize(redactAll(v, redact)), maxNonJSONMessage)
			}
		}
		return e
	}
	switch {
	case trimmed == "":
	case sensitive:
		e.Message = fmt.Sprintf("non-JSON error body (%d bytes, not shown)", len(body))
	default:
		e.Message = truncate(sanitize(redactAll(trimmed, redact)), maxNonJSONMessage)
	}
	return e
}

// parseRetryAfter parses delta-seconds or an HTTP date; 0 when absent or invalid.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// redactAll masks every secret value (of at least 4 bytes) occurring in s.
func redactAll(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= 4 && strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "[REDACTED]")
		}
	}
	return s
}

// sanitize makes s a single printable line: invalid UTF-8 dropped, runs of
// whitespace/control characters collapsed into one space.
func sanitize(s string) string {
	s = strings.ToValidUTF8(s, "")
	var b strings.Builder
	space := false
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == ' ' || r == '\u00a0' {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// truncate cuts s to at most max bytes (on a rune boundary), adding "…" when cut.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const ellipsis = "…"
	cut := max - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}

// Message is what a failed Clever Cloud call says, for conditions and events (the status
// and Clever Cloud's message; never a request or response body).
func Message(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		if ae.Message != "" {
			return fmt.Sprintf("%d %s", ae.StatusCode, ae.Message)
		}
		return fmt.Sprintf("HTTP %d", ae.StatusCode)
	}
	return err.Error()
}
