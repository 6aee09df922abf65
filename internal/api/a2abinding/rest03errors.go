package a2abinding

import (
	"encoding/json"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"

	"github.com/a2aflow/a2aflow/internal/api/apierror"
)

// A2A 0.3's HTTP+JSON binding gives an error its HTTP status but no body,
// and every official 0.3 client reads another one:
//   - a2a-go's (a2acompat/a2av0 rest_client.go, internal/rest FromRESTError)
//     the google.rpc.Status under "error", as 1.0 has it, and only when the
//     Content-Type is application/json;
//   - @a2a-js/sdk's (dist/compat/v0_3/client _LegacyRestTransport
//     _errorFromLegacyBody) a top-level "code", the JSON-RPC error code, and
//     "message" (a2a-js's own 0.3 server's body);
//   - a2a-sdk's, Python (a2a/compat/v0_3/rest_transport.py
//     _handle_http_error) a top-level "type", the SDK's error class name,
//     and "message";
//   - a2a-java 0.3.3.Final's (RestErrorMapper.mapRestError) a top-level
//     "error" holding the Java class name ("io.a2a.spec.TaskNotFoundError",
//     its own server's body) and "message".
//
// a2aflow's 0.3 HTTP+JSON error body is the google.rpc.Status of 1.0 with
// "code", "message" and "type" beside "error", as application/json (a2a-go's
// 0.3 server says application/problem+json, which its own client refuses,
// of a body that is no RFC 9457 problem): a2a-go, JS and Python clients
// type the error. a2a-java's "error" cannot be a class name and a
// google.rpc.Status at once; it keeps a2a-go's (which a2aflow's own remote
// client reads too), and a2a-java 0.3 reports the message untyped. 1.0's
// bodies are the google.rpc.Status alone.

// errorType03 is the "type" of an A2A error's 0.3 HTTP+JSON body: the
// Python SDK's class names (a2a/utils/errors.py JSON_RPC_ERROR_CODE_MAP),
// which are A2A 0.3's JSON schema names but for the extended card's (0.3's
// AuthenticatedExtendedCardNotConfiguredError).
var errorType03 = map[error]string{
	a2a.ErrParseError:                   "JSONParseError",
	a2a.ErrInvalidRequest:               "InvalidRequestError",
	a2a.ErrMethodNotFound:               "MethodNotFoundError",
	a2a.ErrInvalidParams:                "InvalidParamsError",
	a2a.ErrInternalError:                "InternalError",
	a2a.ErrTaskNotFound:                 "TaskNotFoundError",
	a2a.ErrTaskNotCancelable:            "TaskNotCancelableError",
	a2a.ErrPushNotificationNotSupported: "PushNotificationNotSupportedError",
	a2a.ErrUnsupportedOperation:         "UnsupportedOperationError",
	a2a.ErrUnsupportedContentType:       "ContentTypeNotSupportedError",
	a2a.ErrInvalidAgentResponse:         "InvalidAgentResponseError",
	a2a.ErrExtendedCardNotConfigured:    "ExtendedAgentCardNotConfiguredError",
	a2a.ErrExtensionSupportRequired:     "ExtensionSupportRequiredError",
	a2a.ErrVersionNotSupported:          "VersionNotSupportedError",
}

// body03 returns the 0.3 HTTP+JSON error body of a google.rpc.Status error
// body: the same with "code" (the JSON-RPC code of the error its ErrorInfo
// names, else of the HTTP status's), "message" and, for an A2A error,
// "type" beside "error". A body that is not a google.rpc.Status is
// returned unchanged.
func body03(body []byte) []byte {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil || doc["error"] == nil {
		return body
	}
	var status struct {
		Code    int              `json:"code"`
		Message string           `json:"message"`
		Details []map[string]any `json:"details"`
	}
	if json.Unmarshal(doc["error"], &status) != nil {
		return body
	}
	code, found := apierror.Code{}, false
	for _, d := range status.Details {
		if d["@type"] != errordetails.ErrorInfoType {
			continue
		}
		reason, _ := d["reason"].(string)
		domain, _ := d["domain"].(string)
		if code, found = apierror.CodeOfInfo(reason, domain); found {
			break
		}
	}
	if !found {
		code = apierror.CodeOf(sentinelOfStatus(status.Code))
	}
	set := func(key string, v any) {
		if raw, err := json.Marshal(v); err == nil {
			doc[key] = raw
		}
	}
	set("code", code.RPCCode)
	set("message", status.Message)
	if t, ok := errorType03[code.Sentinel]; ok && code.Reason == "" {
		set("type", t)
	} else {
		delete(doc, "type")
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return append(out, '\n')
}

// sentinelOfStatus is the A2A error a google.rpc.Status without an
// ErrorInfo reads as (a2a-go and a2aflow always give one): InternalError
// for a 5xx, else InvalidRequest.
func sentinelOfStatus(status int) error {
	if status >= 500 {
		return a2a.ErrInternalError
	}
	return a2a.ErrInvalidRequest
}
