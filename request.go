package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
)

// badPayload begins every answer to a request that is not the protocol's
// JSON object, as bosh-cpi-go's dispatcher begins it.
const badPayload = "Must provide valid JSON payload: "

// protocolHint is the protocol in one line, for an operator who piped
// something else.
const protocolHint = `cloudstack-cpi reads one JSON request on stdin, like ` +
	`{"method":"info","arguments":[],"context":{}}; see cloudstack-cpi help`

// requestProblem is what makes a request other than one JSON object of
// the protocol's shape, naming where and what is wrong ("" when nothing
// does): the dispatcher answers every such request "Must provide valid
// JSON payload" alone.
func requestProblem(request []byte) string {
	if len(bytes.TrimSpace(request)) == 0 {
		return badPayload + "stdin was empty; " + protocolHint
	}
	var whole any
	if err := json.Unmarshal(request, &whole); err != nil {
		return badPayload + jsonwords.SyntaxAt(request, err)
	}
	if _, isObject := whole.(map[string]any); !isObject {
		return fmt.Sprintf(badPayload+"the request is %s, not an object; %s", jsonwords.Kind(whole), protocolHint)
	}
	// The envelope's members as the dispatcher's rpc.Request types them;
	// context is the call context's to judge (prepareCall).
	var envelope struct {
		Method     *string            `json:"method"`
		Arguments  *[]json.RawMessage `json:"arguments"`
		APIVersion *int               `json:"api_version"`
	}
	if err := json.Unmarshal(request, &envelope); err != nil {
		return badPayload + jsonwords.Translate(err).Error()
	}
	return ""
}

// inJSONWords is err's message with the type error in it, if any, said in
// JSON words: cpi.json and the call context's properties are decoded by
// config/, whose decoder names the Go field and type at fault.
func inJSONWords(err error) string {
	msg := err.Error()
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		msg = strings.Replace(msg, typeErr.Error(), jsonwords.Translate(typeErr).Error(), 1)
	}
	return msg
}
