package dispatch

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/cloudfoundry/bosh-cpi-go/rpc"
)

// maxErrorMessage bounds what an error message echoes back of a request (a
// CID, a method name, a cloud_properties key can be any size): the director
// stores and shows the message, and a megabyte of it helps nobody.
const maxErrorMessage = 4 << 10

// capMessage cuts a message to maxErrorMessage bytes on a character
// boundary and says how much was cut.
func capMessage(s string) string {
	if len(s) <= maxErrorMessage {
		return s
	}
	head := s[:maxErrorMessage]
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	return fmt.Sprintf("%s… (%d bytes cut)", head, len(s)-len(head))
}

// capResponse caps the error message of a dispatcher response; any other
// response passes unchanged.
func capResponse(resp []byte) []byte {
	if len(resp) <= maxErrorMessage {
		return resp
	}
	var r struct {
		Result json.RawMessage    `json:"result"`
		Error  *rpc.ResponseError `json:"error"`
		Log    string             `json:"log"`
	}
	if json.Unmarshal(resp, &r) != nil || r.Error == nil || len(r.Error.Message) <= maxErrorMessage {
		return resp
	}
	r.Error.Message = capMessage(r.Error.Message)
	out, err := json.Marshal(r)
	if err != nil {
		return resp
	}
	return out
}
