package a2abinding

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
	"github.com/a2aflow/a2aflow/internal/api/taskservice"
)

// A2A 1.1 (the specification's dev-1.1 branch) adds the task generation to
// A2A 1.0 (§3.2.7): generation in Task, TaskStatusUpdateEvent and
// TaskArtifactUpdateEvent, GetTaskRequest.currentGeneration (long-poll) and
// SendMessageConfiguration.ifGenerationMatch (a conditional write, refused
// with TaskGenerationMismatchError). A request with A2A-Version 1.1 is
// served as a 1.0 one (a2a-go's 1.0 transports, every correction of
// validate.go and a2agofixes.go) inside this layer, which
//   - reads the 1.1 fields from the request (JSON-RPC params; HTTP+JSON
//     ?currentGeneration= and the body's configuration, §11.5), removes
//     them, and hands them to the service (taskservice.WithGeneration);
//   - writes each generation the service put in a task's or event's
//     metadata (taskservice.GenerationMetadataKey) as the object's own
//     "generation" field, an int64 in protojson's form, a string (ADR-001
//     of the branch: the JSON is the proto's ProtoJSON);
//   - gives TaskGenerationMismatchError its code, which a2a-go's
//     transports, knowing no such error, write as an internal error.
// A 1.0 or 0.3 request never reaches it. The gRPC binding serves A2A 1.0
// and 0.3 only (a2a-go's generated types of the 1.0 proto have no
// generation field): docs/guides/protocol-versions.md.

// v11Version is the A2A-Version value of A2A 1.1.
const v11Version = "1.1"

// isV11 reports whether r asks for A2A 1.1.
func isV11(r *http.Request) bool {
	v := r.Header.Get(a2a.SvcParamVersion)
	if v == "" {
		v = r.URL.Query().Get(a2a.SvcParamVersion)
	}
	switch strings.TrimPrefix(strings.TrimSpace(v), "v") {
	case "1.1", "1.1.0":
		return true
	}
	return false
}

// serveV11 serves r, an A2A 1.1 request, through next, the 1.0 endpoint.
func serveV11(w http.ResponseWriter, r *http.Request, next http.Handler) {
	jsonRPC := r.Method == http.MethodPost && (r.URL.Path == "" || r.URL.Path == "/")
	r.Header.Set(a2a.SvcParamVersion, "1.0")
	g, rpcID, err := readGeneration(r, jsonRPC)
	if err != nil {
		apierror.Write(w, apierror.ShapeOf(jsonRPC), rpcID, 0, err)
		return
	}
	r = r.WithContext(taskservice.WithGeneration(r.Context(), g))
	vw := &v11Writer{ResponseWriter: w, status: http.StatusOK,
		// A conditional HTTP+JSON message:stream: its refusal is answered
		// 409 before any stream (holdStream).
		hold: !jsonRPC && g.IfMatch != nil && strings.HasSuffix(r.URL.Path, "message:stream")}
	next.ServeHTTP(vw, r)
	vw.finish()
}

// readGeneration reads (and removes) the 1.1 fields of r: currentGeneration
// of a GetTask, ifGenerationMatch of a SendMessage's configuration.
func readGeneration(r *http.Request, jsonRPC bool) (g taskservice.Generation, rpcID json.RawMessage, err error) {
	if !jsonRPC && r.Method == http.MethodGet {
		q := r.URL.Query()
		if v, ok := q["currentGeneration"]; ok {
			n, err := parseGeneration("currentGeneration", json.RawMessage(strconv.Quote(v[0])))
			if err != nil {
				return g, nil, err
			}
			g.Current = n
			q.Del("currentGeneration")
			r.URL.RawQuery = q.Encode()
		}
		return g, nil, nil
	}
	if r.Method != http.MethodPost || r.Body == nil {
		return g, nil, nil
	}
	body, readErr := io.ReadAll(r.Body)
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{readErr}))
	if readErr != nil {
		return g, nil, nil // the binding answers the failed read
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil {
		return g, nil, nil // the binding answers a body that is not an object
	}
	rpcID = doc["id"]
	params := doc
	if jsonRPC {
		if json.Unmarshal(doc["params"], &params) != nil || params == nil {
			return g, rpcID, nil
		}
	}
	if g.Current, err = takeGeneration(params, "currentGeneration"); err != nil {
		return g, rpcID, err
	}
	var config map[string]json.RawMessage
	if json.Unmarshal(params["configuration"], &config) == nil && config != nil {
		if g.IfMatch, err = takeGeneration(config, "ifGenerationMatch"); err != nil {
			return g, rpcID, err
		}
		params["configuration"], _ = json.Marshal(config)
	}
	if jsonRPC {
		doc["params"], _ = json.Marshal(params)
	}
	body, _ = json.Marshal(doc)
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return g, rpcID, nil
}

// takeGeneration removes the field name from fields and parses it.
func takeGeneration(fields map[string]json.RawMessage, name string) (*int64, error) {
	raw, ok := fields[name]
	if !ok {
		return nil, nil
	}
	delete(fields, name)
	if string(raw) == "null" {
		return nil, nil
	}
	return parseGeneration(name, raw)
}

// parseGeneration parses a generation: an int64, as a JSON number or, as
// ProtoJSON writes it, a string; not negative.
func parseGeneration(name string, raw json.RawMessage) (*int64, error) {
	text := string(raw)
	if s, err := strconv.Unquote(text); err == nil {
		text = s
	}
	n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err != nil || n < 0 {
		return nil, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("%s must be a non-negative integer, got %s", name, raw))
	}
	return &n, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err == nil {
		return 0, io.EOF
	}
	return 0, e.err
}

// v11Writer rewrites the 1.0 endpoint's answer to A2A 1.1's (v11JSON):
// a JSON answer whole, a stream (text/event-stream) event by event.
//
// With hold, a stream's header and lines are held back until its first
// event: when that is TaskGenerationMismatchError, the answer is that
// error, 409, instead of a stream (a2a-go v2.4.0's a2asrv/rest.go
// handleStreamingRequest writes a stream's headers before the service's
// first event, so that a refusal is an error event in a 200 stream);
// otherwise the stream goes on as it came.
type v11Writer struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	stream      bool
	buf         bytes.Buffer // the JSON answer, or the stream's partial line
	hold        bool         // the stream's header and lines are held back (held)
	held        bytes.Buffer
	refused     bool // the held stream was answered with its refusal: the rest is dropped
}

func (v *v11Writer) WriteHeader(status int) {
	if v.wroteHeader {
		return
	}
	v.wroteHeader, v.status = true, status
	if strings.HasPrefix(v.Header().Get("Content-Type"), "text/event-stream") {
		v.stream = true
		if !v.hold {
			v.ResponseWriter.WriteHeader(status)
		}
	}
}

// release ends the hold: the stream's header and the lines held back are
// written.
func (v *v11Writer) release() error {
	v.hold = false
	v.ResponseWriter.WriteHeader(v.status)
	_, err := v.ResponseWriter.Write(v.held.Bytes())
	v.held.Reset()
	return err
}

// writeLine writes one line of the stream, or holds it back, or answers
// the held stream with its refusal (see v11Writer).
func (v *v11Writer) writeLine(line []byte, mismatch bool) error {
	switch {
	case v.refused:
		return nil
	case v.hold && mismatch:
		data, _ := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data: "))
		h := v.Header()
		h.Del("Cache-Control")
		h.Del("Connection")
		h.Del("X-Accel-Buffering")
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(data)))
		v.ResponseWriter.WriteHeader(http.StatusConflict)
		v.refused, v.hold = true, false
		_, err := v.ResponseWriter.Write(data)
		return err
	case v.hold:
		v.held.Write(line)
		if bytes.HasPrefix(line, []byte("data:")) {
			return v.release()
		}
		return nil
	}
	_, err := v.ResponseWriter.Write(line)
	return err
}

func (v *v11Writer) Write(p []byte) (int, error) {
	if !v.wroteHeader {
		v.WriteHeader(http.StatusOK)
	}
	v.buf.Write(p)
	if !v.stream {
		return len(p), nil
	}
	for {
		line, err := v.buf.ReadBytes('\n')
		if err != nil { // no whole line yet: keep it
			rest := append([]byte(nil), line...)
			v.buf.Reset()
			v.buf.Write(rest)
			return len(p), nil
		}
		mismatch := false
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			var out []byte
			var changed bool
			if out, mismatch, changed = v11JSON(bytes.TrimSpace(data)); changed {
				line = append(append([]byte("data: "), out...), '\n')
			}
		}
		if err := v.writeLine(line, mismatch); err != nil {
			return len(p), err
		}
	}
}

func (v *v11Writer) Flush() {
	if !v.stream || v.hold || v.refused {
		return
	}
	if f, ok := v.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (v *v11Writer) Unwrap() http.ResponseWriter { return v.ResponseWriter }

// finish writes a JSON answer, rewritten.
func (v *v11Writer) finish() {
	if v.stream && v.hold { // a stream that ended before its first event
		_ = v.release()
	}
	if v.stream || !v.wroteHeader {
		return
	}
	body := v.buf.Bytes()
	status := v.status
	if out, mismatch, changed := v11JSON(body); changed {
		body = out
		if mismatch && status >= 400 {
			status = http.StatusConflict
		}
		v.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	v.ResponseWriter.WriteHeader(status)
	_, _ = v.ResponseWriter.Write(body)
}

// v11JSON rewrites one JSON document of the 1.0 endpoint's answer: every
// generation in a metadata object becomes its owner's "generation", and a
// generation mismatch written as an internal error gets its code. It
// reports whether the document held a mismatch and whether it changed.
func v11JSON(doc []byte) (out []byte, mismatch, changed bool) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return doc, false, false
	}
	var w v11Walk
	w.walk(v)
	if !w.changed {
		return doc, false, false
	}
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return doc, false, false
	}
	_ = bw.Flush()
	return bytes.TrimRight(b.Bytes(), "\n"), w.mismatch, true
}

type v11Walk struct{ changed, mismatch bool }

func (w *v11Walk) walk(v any) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			w.walk(e)
		}
	case map[string]any:
		if meta, ok := x["metadata"].(map[string]any); ok {
			if gen, ok := meta[taskservice.GenerationMetadataKey]; ok {
				delete(meta, taskservice.GenerationMetadataKey)
				if len(meta) == 0 {
					delete(x, "metadata")
				}
				x["generation"] = fmt.Sprint(gen)
				w.changed = true
			}
		}
		if e, ok := x["error"].(map[string]any); ok && w.fixMismatch(e) {
			w.changed, w.mismatch = true, true
		}
		for k, e := range x {
			if k != "error" {
				w.walk(e)
			}
		}
	}
}

// fixMismatch gives the error object e (JSON-RPC's or google.rpc.Status)
// TaskGenerationMismatchError's code when it is one, which a2a-go wrote as
// an internal error whose ErrorInfo holds the generations
// (apierror.generationMismatch).
func (w *v11Walk) fixMismatch(e map[string]any) bool {
	details, _ := e["data"].([]any)
	if d, ok := e["details"].([]any); ok {
		details = d
	}
	for _, d := range details {
		info, _ := d.(map[string]any)
		meta, _ := info["metadata"].(map[string]any)
		if info["reason"] != "INTERNAL_ERROR" || meta["expectedGeneration"] == nil || meta["currentGeneration"] == nil {
			continue
		}
		code := apierror.CodeOf(apierror.ErrTaskGenerationMismatch)
		info["reason"] = code.Reason
		if _, rest := e["status"]; rest {
			e["code"], e["status"] = json.Number(strconv.Itoa(code.Status)), code.GRPC
		} else {
			e["code"] = json.Number(strconv.Itoa(code.RPCCode))
		}
		return true
	}
	return false
}
