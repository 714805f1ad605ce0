// Package schema is CloudStack 4.22's API schema: every API's name, whether it
// is asynchronous and its request parameters.
//
// It is data, not behaviour: CloudStack's own answer to listApis
// (ApiDiscoveryServiceImpl.listApis), which the API family of the simulator
// validates requests against.
//
// apis.json.gz is generated from generate/listApis.json of the cloudstack-go
// v2.19.0 module (Apache-2.0), a listApis dump taken from a CloudStack 4.22.0
// management server, with each API's "response" array removed;
// responses.json.gz holds those arrays by API name, read only when asked for
// (Response). Regenerate both with `go generate` in this directory or
// `go run ./simulator/schema/gen` from the repository root after changing the
// cloudstack-go version in go.mod.
package schema

//go:generate go run ./gen -o apis.json.gz -responses responses.json.gz

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

//go:embed apis.json.gz
var apisGz []byte

//go:embed responses.json.gz
var responsesGz []byte

// Param is one request parameter of an API.
type Param struct {
	Name        string `json:"name"`
	Type        string `json:"type"` // string, uuid, boolean, integer, long, short, double, float, date, list, map
	Required    bool   `json:"required"`
	Length      int    `json:"length"`
	Description string `json:"description"`
	Since       string `json:"since,omitempty"`
	Related     string `json:"related,omitempty"`
}

// API is one command of the CloudStack API.
type API struct {
	Name        string  `json:"name"` // canonical spelling, e.g. "listZones"
	IsAsync     bool    `json:"isasync"`
	Description string  `json:"description"`
	Since       string  `json:"since,omitempty"`
	Params      []Param `json:"params"`

	// Raw is the API's entry as listApis returns it (minus "response").
	Raw json.RawMessage `json:"-"`

	byName map[string]int
}

// Param finds a parameter by name, ignoring case as CloudStack does once it has
// lowercased the request's parameter names.
func (a *API) Param(name string) (Param, bool) {
	i, ok := a.byName[strings.ToLower(name)]
	if !ok {
		return Param{}, false
	}
	return a.Params[i], true
}

type index struct {
	all    []*API
	byName map[string]*API
}

var (
	loadOnce sync.Once
	loaded   index
	errLoad  error
)

func load() (index, error) {
	loadOnce.Do(func() { loaded, errLoad = parse(apisGz) })
	return loaded, errLoad
}

func parse(gz []byte) (index, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return index{}, fmt.Errorf("schema: %w", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return index{}, fmt.Errorf("schema: %w", err)
	}
	var doc struct {
		API []json.RawMessage `json:"api"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return index{}, fmt.Errorf("schema: %w", err)
	}
	idx := index{byName: make(map[string]*API, len(doc.API))}
	for _, raw := range doc.API {
		api := &API{Raw: raw}
		if err := json.Unmarshal(raw, api); err != nil {
			return index{}, fmt.Errorf("schema: %w", err)
		}
		api.byName = make(map[string]int, len(api.Params))
		for i, p := range api.Params {
			api.byName[strings.ToLower(p.Name)] = i
		}
		idx.all = append(idx.all, api)
		idx.byName[strings.ToLower(api.Name)] = api
	}
	return idx, nil
}

// Lookup finds an API by name, ignoring case. Callers that must be as strict
// as CloudStack (which matches command names exactly) compare API.Name.
func Lookup(name string) (*API, bool) {
	idx, err := load()
	if err != nil {
		return nil, false
	}
	api, ok := idx.byName[strings.ToLower(name)]
	return api, ok
}

// All returns every API sorted by name. The slice is shared: do not modify it.
func All() []*API {
	idx, _ := load()
	return idx.all
}

// Err reports whether the embedded schema could be read; it is nil unless the
// generated file is corrupt.
func Err() error {
	_, err := load()
	return err
}

var (
	responsesOnce sync.Once
	responses     map[string]json.RawMessage
)

// Response is the API's "response" array as listApis answers it: the
// response object's fields, each with its name, description and type
// (ApiDiscoveryServiceImpl's ApiResponseResponse). It is read from the
// embedded file on first use.
func Response(name string) (json.RawMessage, bool) {
	responsesOnce.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(responsesGz))
		if err != nil {
			return
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			return
		}
		_ = json.Unmarshal(b, &responses)
	})
	r, ok := responses[name]
	return r, ok && len(r) > 0
}
