package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Error ids used in error bodies.
const (
	ErrIDBadRequest       = 4000
	ErrIDUnauthorized     = 401
	ErrIDNotFound         = 4004
	ErrIDMethodNotAllowed = 4005
	ErrIDConflict         = 4009
	ErrIDTooLarge         = 4013
)

// WriteJSON answers status with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data, _ = json.Marshal(ErrorBody{ID: 500, Message: "fakeapi: cannot encode response", Type: "error"})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// WriteError answers status with the error body {id, message, type: "error"}.
func WriteError(w http.ResponseWriter, status int, id int64, msg string) {
	WriteJSON(w, status, ErrorBody{ID: id, Message: msg, Type: "error"})
}

// WriteFieldsError answers 400 with a validation error body naming fields.
func WriteFieldsError(w http.ResponseWriter, msg string, fields map[string]string) {
	WriteJSON(w, http.StatusBadRequest, ErrorBody{ID: ErrIDBadRequest, Message: msg, Type: "error", Fields: fields})
}

// OwnerNotFound answers 404 for an unknown organisation (or user).
func OwnerNotFound(w http.ResponseWriter) {
	WriteError(w, http.StatusNotFound, ErrIDNotFound, "organisation not found")
}

// AddonNotFound answers 404 for an unknown add-on.
func AddonNotFound(w http.ResponseWriter) {
	WriteError(w, http.StatusNotFound, ErrIDNotFound, "addon not found")
}

// MaxBody is the largest request body the fake reads (1 MiB).
const MaxBody = 1 << 20

// ReadBody reads a JSON request body, answering 400/413 itself on failure.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		WriteError(w, http.StatusBadRequest, ErrIDBadRequest, "cannot read request body")
		return nil, false
	}
	if len(data) > MaxBody {
		WriteError(w, http.StatusRequestEntityTooLarge, ErrIDTooLarge, "request body too large")
		return nil, false
	}
	return data, true
}

// JSONErrorMessage describes a decoding error without quoting the body.
func JSONErrorMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("invalid JSON body: field %q has the wrong type (expected %s)", te.Field, te.Type)
	}
	return "invalid JSON body: malformed JSON"
}

// DecodeObjectBody reads a JSON object body into v, answering 400/413 itself on failure.
func DecodeObjectBody(w http.ResponseWriter, r *http.Request, v any) bool {
	data, ok := ReadObjectBody(w, r)
	if !ok {
		return false
	}
	if err := json.Unmarshal(data, v); err != nil {
		WriteError(w, http.StatusBadRequest, ErrIDBadRequest, JSONErrorMessage(err))
		return false
	}
	return true
}

// ReadObjectBody reads a request body that must be a JSON object (400 otherwise).
func ReadObjectBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	data, ok := ReadBody(w, r)
	if !ok {
		return nil, false
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		WriteError(w, http.StatusBadRequest, ErrIDBadRequest, "invalid JSON body: expected a JSON object")
		return nil, false
	}
	return data, true
}
