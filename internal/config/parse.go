package config

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"sigs.k8s.io/yaml"
)

// format of a configuration document.
type format int

const (
	formatUnknown format = iota
	formatTOML
	formatYAML
	formatJSON
)

func (f format) String() string {
	switch f {
	case formatTOML:
		return "TOML"
	case formatYAML:
		return "YAML"
	case formatJSON:
		return "JSON"
	default:
		return "configuration document"
	}
}

// formatFromExt returns the format implied by a file name's extension, or
// formatUnknown (sniff the content).
func formatFromExt(path string) format {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".toml":
		return formatTOML
	case ".yaml", ".yml":
		return formatYAML
	case ".json":
		return formatJSON
	default:
		return formatUnknown
	}
}

// syntaxError reports a document that does not parse. It deliberately holds no
// part of the document (and never wraps the parser's error, whose message or
// fields may quote the input): only the format and the position.
type syntaxError struct {
	format    format
	line, col int
	key       string // last key parsed before the error (TOML), may be empty
}

func (e *syntaxError) Error() string {
	var b strings.Builder
	b.WriteString("invalid ")
	b.WriteString(e.format.String())
	if e.line > 0 {
		fmt.Fprintf(&b, " at line %d", e.line)
		if e.col > 0 {
			fmt.Fprintf(&b, ", column %d", e.col)
		}
	}
	if e.key != "" {
		fmt.Fprintf(&b, " (after key %q)", e.key)
	}
	return b.String()
}

// errNotMapping: the document parsed but is not a mapping/table at the top level.
var errNotMapping = errors.New("not a TOML, YAML or JSON document with an [api] table")

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func decodeTOML(b []byte) (map[string]any, error) {
	var m map[string]any
	if _, err := toml.Decode(string(b), &m); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &syntaxError{format: formatTOML, line: pe.Position.Line, col: pe.Position.Col, key: knownKey(pe.LastKey)}
		}
		return nil, &syntaxError{format: formatTOML}
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// knownKey returns key when every dotted part of it is a key this package
// knows (so that it cannot be a secret typed by mistake as a key), else "".
func knownKey(key string) string {
	if key == "" {
		return ""
	}
	known := map[string]bool{"api": true, "operator": true, "listen": true}
	for _, f := range fields {
		known[f.key] = true
		for _, a := range f.aliases {
			known[a] = true
		}
	}
	for _, part := range strings.Split(key, ".") {
		if !known[part] {
			return ""
		}
	}
	return key
}

var yamlLineRE = regexp.MustCompile(`\bline (\d+)\b`)

func decodeYAML(b []byte) (map[string]any, error) {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		e := &syntaxError{format: formatYAML}
		if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
			e.line, _ = strconv.Atoi(m[1])
		}
		return nil, e
	}
	return asMapping(v)
}

func decodeJSON(b []byte) (map[string]any, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		e := &syntaxError{format: formatJSON}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			e.line, e.col = position(b, se.Offset)
		}
		return nil, e
	}
	return asMapping(v)
}

func asMapping(v any) (map[string]any, error) {
	switch t := v.(type) {
	case nil: // empty document
		return map[string]any{}, nil
	case map[string]any:
		return t, nil
	default:
		return nil, errNotMapping
	}
}

// position converts a byte offset into a 1-based line and column.
func position(b []byte, offset int64) (line, col int) {
	if offset < 0 {
		return 0, 0
	}
	if offset > int64(len(b)) {
		offset = int64(len(b))
	}
	before := b[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return line, col
}

// tomlHintRE matches a line that can only be TOML: a table header or a
// `key = value` pair.
var tomlHintRE = regexp.MustCompile(`(?m)^[ \t]*(\[\[?[ \t]*[A-Za-z0-9_."'-][^\]\n]*\]\]?[ \t]*(#.*)?$|[A-Za-z0-9_."'-]+[ \t]*=)`)

// decodeAny parses a document of unknown format.
//
// Order: a document starting with '{' is JSON (TOML cannot start with '{'),
// then flow-style YAML. Anything else is tried as TOML, then YAML. TOML first is
// safe: a non-empty YAML mapping is never valid TOML (it needs "key: value" or
// "- item" lines, which TOML rejects), while a TOML document with content is
// either invalid YAML or a YAML scalar, which is rejected as not a mapping. When
// everything fails, the error of the most plausible format is returned.
func decodeAny(b []byte) (map[string]any, format, error) {
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] == '{' {
		m, err := decodeJSON(b)
		if err == nil {
			return m, formatJSON, nil
		}
		if m, yerr := decodeYAML(b); yerr == nil {
			return m, formatYAML, nil
		}
		return nil, formatJSON, err
	}
	m, terr := decodeTOML(b)
	if terr == nil {
		return m, formatTOML, nil
	}
	m, yerr := decodeYAML(b)
	if yerr == nil {
		return m, formatYAML, nil
	}
	if tomlHintRE.Match(b) {
		return nil, formatTOML, terr
	}
	return nil, formatYAML, yerr
}

// decode parses b in format f (formatUnknown: sniff).
func decode(b []byte, f format) (map[string]any, error) {
	b = bytes.TrimPrefix(b, utf8BOM)
	switch f {
	case formatTOML:
		return decodeTOML(b)
	case formatYAML:
		return decodeYAML(b)
	case formatJSON:
		return decodeJSON(b)
	default:
		m, _, err := decodeAny(b)
		return m, err
	}
}

// extractAPI reads the "api" table of a decoded document. found reports whether
// the document has an "api" key at all.
func extractAPI(doc map[string]any) (api APIConfig, found bool, err error) {
	raw, found := doc["api"]
	if !found || raw == nil {
		return APIConfig{}, found, nil
	}
	table, ok := raw.(map[string]any)
	if !ok {
		return APIConfig{}, true, errors.New("api must be a table/mapping of keys (token, secret, consumer-key, ...)")
	}
	for _, f := range fields {
		var chosen, chosenKey string
		for _, key := range append([]string{f.key}, f.aliases...) {
			v, present := table[key]
			if !present || v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return APIConfig{}, true, fmt.Errorf("api.%s must be a string (quote the value)", key)
			}
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			if chosen != "" && s != chosen {
				return APIConfig{}, true, fmt.Errorf("api.%s and api.%s are both set, to different values; keep one", chosenKey, key)
			}
			chosen, chosenKey = s, key
		}
		*f.ptr(&api) = chosen
	}
	return api, true, nil
}

// parseFile parses the content of a configuration file; the format comes from
// the file's extension, or is sniffed.
func parseFile(path string, b []byte) (APIConfig, error) {
	doc, err := decode(b, formatFromExt(path))
	if err != nil {
		return APIConfig{}, fmt.Errorf("config file %q: %w", path, err)
	}
	api, _, err := extractAPI(doc)
	if err != nil {
		return APIConfig{}, fmt.Errorf("config file %q: %w", path, err)
	}
	return api, nil
}

// parseDoc parses a document of unknown format and extracts its api table.
func parseDoc(b []byte) (APIConfig, bool, error) {
	doc, err := decode(b, formatUnknown)
	if err != nil {
		return APIConfig{}, false, err
	}
	return extractAPI(doc)
}

// decodeBase64Doc returns the decoding of b when b, ignoring whitespace
// (trailing newline, line wrapping), is valid base64 (standard or URL alphabet,
// padded or not).
func decodeBase64Doc(b []byte) ([]byte, bool) {
	compact := make([]byte, 0, len(b))
	for _, c := range b {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9',
			c == '+', c == '/', c == '-', c == '_', c == '=':
			compact = append(compact, c)
		default:
			return nil, false
		}
	}
	if len(compact) == 0 {
		return nil, false
	}
	s := string(compact)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if d, err := enc.DecodeString(s); err == nil {
			return d, true
		}
	}
	return nil, false
}

// errNoAPI: the document parsed but has no [api] table.
var errNoAPI = errors.New("config document has no [api] table")

// ParseDocument parses a per-namespace override document (the "config" key of a
// clever-operator / clever-kubernetes-operator Secret) whose format is unknown:
// TOML, YAML or JSON (see decodeAny for the order).
//
// For compatibility with the Rust operator, whose Secret held base64 of the TOML
// (it base64-decoded data.config a second time), when b is valid base64
// (surrounding whitespace and line wrapping ignored) and the decoded bytes parse
// as a document with an [api] table, the decoded document is used.
//
// A document without an [api] table is an error. Errors never contain any part
// of the document.
func ParseDocument(b []byte) (APIConfig, error) {
	if dec, ok := decodeBase64Doc(b); ok {
		api, found, err := parseDoc(dec)
		if err == nil && found {
			return api, nil
		}
		// Not a base64 document after all? Try the bytes as they are.
		plain, plainFound, plainErr := parseDoc(b)
		if plainErr == nil && plainFound {
			return plain, nil
		}
		// Neither works. If the decoded bytes look like text, the base64 form
		// was clearly intended: report about the decoded document.
		if utf8.Valid(dec) && !bytes.ContainsRune(dec, 0) {
			if err != nil {
				return APIConfig{}, fmt.Errorf("config document (base64-decoded): %w", err)
			}
			return APIConfig{}, fmt.Errorf("config document (base64-decoded) has no [api] table")
		}
	}
	api, found, err := parseDoc(b)
	if err != nil {
		return APIConfig{}, fmt.Errorf("config document: %w", err)
	}
	if !found {
		return APIConfig{}, errNoAPI
	}
	return api, nil
}
