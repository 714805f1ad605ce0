package dispatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
)

// badPayload begins every answer to a request that is not the protocol's
// JSON object, as bosh-cpi-go's dispatcher begins it.
const badPayload = "Must provide valid JSON payload: "

// protocolHint is the protocol in one line, for an operator who piped
// something else.
const protocolHint = `cloudstack-cpi reads one JSON request on stdin, like ` +
	`{"method":"info","arguments":[],"context":{}}; see cloudstack-cpi help`

// maxRequest bounds the request read from stdin. A director's largest is
// create_vm, whose env and networks become the agent's settings, which
// reach a VM in at most 1 MiB whichever way they go (CloudStack's user data,
// vm.userdata.max.length, at most 1048576; the config drive and the
// registry take 1 MiB, configdrive.MaxSettingsSize and
// registry.MaxSettingsSize): twice that leaves room for the arguments the
// settings do not carry, and bounds what decoding costs (every byte is
// decoded several times: here, by the dispatcher, for each argument).
const maxRequest = 2 << 20

// errRequestTooLarge is the answer to a request over maxRequest.
var errRequestTooLarge = fmt.Errorf("the request on stdin is over the CloudStack CPI's limit of 2 MiB (%d bytes) and "+
	"was not read further; a director's largest request, create_vm, is far smaller: its env and networks become the "+
	"agent's settings, which reach a VM in at most 1 MiB", maxRequest)

// readRequest reads stdin up to maxRequest bytes, and one more to know
// whether there is more: what lies beyond is never read, so an oversized
// request costs no more memory than the limit.
func readRequest(stdin io.Reader) ([]byte, error) {
	request, err := io.ReadAll(io.LimitReader(stdin, maxRequest+1))
	if err != nil {
		return nil, err
	}
	if len(request) > maxRequest {
		return nil, errRequestTooLarge
	}
	return request, nil
}

// requestLimits bound the shape of a request. A director's largest,
// create_vm's, holds a few hundred values (members and array elements),
// nested less than ten deep; decoding costs memory by the value (a 2 MiB
// request of small objects took 240 MB, one of a single string 25 MB).
var requestLimits = jsonwords.Limits{MaxValues: 10000, MaxDepth: 64}

// requestProblem is what makes a request other than one JSON object of
// the protocol's shape, naming where and what is wrong ("" when nothing
// does): the dispatcher answers every such request "Must provide valid
// JSON payload" alone.
func requestProblem(request []byte) string {
	if len(bytes.TrimSpace(request)) == 0 {
		return badPayload + "stdin was empty; " + protocolHint
	}
	if e := jsonwords.Scan(request, requestLimits); e != nil {
		if e.OverLimit {
			return fmt.Sprintf("the request is over the CloudStack CPI's limits for one request (%d values, nested "+
				"at most %d deep): %s; a director's largest request, create_vm, holds a few hundred values",
				requestLimits.MaxValues, requestLimits.MaxDepth, e)
		}
		return badPayload + e.Error()
	}
	var whole any
	if err := json.Unmarshal(request, &whole); err != nil {
		return badPayload + jsonwords.SyntaxAt(request, err)
	}
	if _, isObject := whole.(map[string]any); !isObject {
		return fmt.Sprintf(badPayload+"the request is %s, not an object; %s", jsonwords.Kind(whole), protocolHint)
	}
	// The envelope's members as the dispatcher's rpc.Request types them;
	// the context's cpi-config properties are the call context's to judge
	// (prepareCall).
	var envelope struct {
		Method     *string                     `json:"method"`
		Arguments  *[]json.RawMessage          `json:"arguments"`
		APIVersion *int                        `json:"api_version"`
		Context    *map[string]json.RawMessage `json:"context"`
	}
	if err := json.Unmarshal(request, &envelope); err != nil {
		return badPayload + jsonwords.Translate(err).Error()
	}
	if envelope.Method == nil || *envelope.Method == "info" || envelope.Context == nil {
		return ""
	}
	return directorContextProblem(*envelope.Context)
}

// directorContextProblem is what is wrong with the keys a director puts in
// a call's context (config.DirectorContextKeys), "" when nothing is. info
// reads none of them (prepareCall), so they are not judged for it.
func directorContextProblem(context map[string]json.RawMessage) string {
	raw, _ := json.Marshal(context)
	var director struct {
		DirectorUUID *string `json:"director_uuid"`
		RequestID    *string `json:"request_id"`
		VM           *struct {
			Stemcell *struct {
				APIVersion *int `json:"api_version"`
			} `json:"stemcell"`
		} `json:"vm"`
	}
	if err := json.Unmarshal(raw, &director); err != nil {
		return badPayload + "context." + jsonwords.Translate(err).Error()
	}
	if vm := director.VM; vm != nil && vm.Stemcell != nil && vm.Stemcell.APIVersion != nil && *vm.Stemcell.APIVersion < 1 {
		// bosh-director sends the api_version of the stemcell's
		// stemcell.MF, absent meaning 1 (docs-bosh build-stemcell.md).
		return fmt.Sprintf("context.vm.stemcell.api_version is %d; a stemcell's api_version is a whole number from 1, "+
			"as its stemcell.MF gives it", *vm.Stemcell.APIVersion)
	}
	return ""
}
