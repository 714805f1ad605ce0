// Package schema is the API schema of each CloudStack release the simulator
// can be: every API's name, whether it is asynchronous and its request
// parameters.
//
// It is data, not behaviour: CloudStack's own answer to listApis
// (ApiDiscoveryServiceImpl.listApis), which the API family of the simulator
// validates requests against.
//
// Each release's files are generated from generate/listApis.json of the
// cloudstack-go module (Apache-2.0) of that release, a listApis dump taken
// from its management server: apis.json.gz is 4.22 (cloudstack-go
// v2.19.0), apis-4.20.json.gz 4.20 (v2.17.1), apis-4.19.json.gz 4.19
// (v2.16.1), each with every API's "response" array removed; those arrays
// are in responses.json.gz, responses-4.20.json.gz and
// responses-4.19.json.gz by API name, read only when asked for
// (Schema.Response). Regenerate them with `go generate` in this directory
// (`make generate`); the go:generate lines name each release's module
// version.
package schema

//go:generate go run ./gen -client v2.19.0 -o apis.json.gz -responses responses.json.gz
//go:generate go run ./gen -client v2.17.1 -o apis-4.20.json.gz -responses responses-4.20.json.gz
//go:generate go run ./gen -client v2.16.1 -o apis-4.19.json.gz -responses responses-4.19.json.gz

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

//go:embed apis.json.gz apis-4.20.json.gz apis-4.19.json.gz
//go:embed responses.json.gz responses-4.20.json.gz responses-4.19.json.gz
var files embed.FS

// Version is a CloudStack release line whose API schema the package has,
// as "4.22".
type Version string

// The release lines the package has.
const (
	V419 Version = "4.19"
	V420 Version = "4.20"
	V422 Version = "4.22"
)

// Newest is the release the simulator is unless told otherwise, and the
// one whose schema names every command it implements.
const Newest = V422

// release is one release line's schema file, its response arrays' file
// and the version its management server reports
// (ManagementServerImpl.getVersion, the implementation version of the
// build the schema was dumped from: the newest "since" its parameters
// name).
type release struct {
	file, responses, full string
}

var releases = map[Version]release{
	V419: {"apis-4.19.json.gz", "responses-4.19.json.gz", "4.19.0.0"},
	V420: {"apis-4.20.json.gz", "responses-4.20.json.gz", "4.20.1.0"},
	V422: {"apis.json.gz", "responses.json.gz", "4.22.0.0"},
}

// Versions lists the release lines the package has, oldest first.
func Versions() []Version { return []Version{V419, V420, V422} }

// ParseVersion reads a release line as "4.20"; a full version such as
// "4.20.1.0" names its line.
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(s, ".")
	if len(parts) >= 2 {
		if v := Version(parts[0] + "." + parts[1]); releases[v].file != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("CloudStack %q: the simulator has the API of %s", s, strings.Join(VersionNames(), ", "))
}

// AtLeast says release line v is line since or a later one; an empty
// since is every line.
func (v Version) AtLeast(since string) bool {
	if since == "" {
		return true
	}
	return !lineBefore(string(v), since)
}

// lineBefore compares "major.minor" release lines numerically.
func lineBefore(a, b string) bool {
	var am, an, bm, bn int
	_, _ = fmt.Sscanf(a, "%d.%d", &am, &an)
	_, _ = fmt.Sscanf(b, "%d.%d", &bm, &bn)
	return am < bm || (am == bm && an < bn)
}

// VersionNames are Versions as strings.
func VersionNames() []string {
	var names []string
	for _, v := range Versions() {
		names = append(names, string(v))
	}
	return names
}

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

// Schema is one release's API.
type Schema struct {
	Version Version
	// Release is the full version its management server reports, as
	// "4.22.0.0".
	Release string
	all     []*API
	byName  map[string]*API

	responsesFile string
	responsesOnce sync.Once
	responses     map[string]json.RawMessage
}

var (
	loadMu sync.Mutex
	loaded = map[Version]*Schema{}
)

// For reads a release line's schema (once; later calls share it).
func For(v Version) (*Schema, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if s := loaded[v]; s != nil {
		return s, nil
	}
	r, ok := releases[v]
	if !ok {
		return nil, fmt.Errorf("schema: no CloudStack %q", v)
	}
	b, err := readGz(r.file)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", r.file, err)
	}
	s.Version, s.Release, s.responsesFile = v, r.full, r.responses
	loaded[v] = s
	return s, nil
}

// readGz is an embedded file, uncompressed.
func readGz(file string) ([]byte, error) {
	gz, err := files.ReadFile(file)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

func parse(b []byte) (*Schema, error) {
	var doc struct {
		API []json.RawMessage `json:"api"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	s := &Schema{byName: make(map[string]*API, len(doc.API))}
	for _, raw := range doc.API {
		api := &API{Raw: raw}
		if err := json.Unmarshal(raw, api); err != nil {
			return nil, err
		}
		api.byName = make(map[string]int, len(api.Params))
		for i, p := range api.Params {
			api.byName[strings.ToLower(p.Name)] = i
		}
		s.all = append(s.all, api)
		s.byName[strings.ToLower(api.Name)] = api
	}
	return s, nil
}

// Lookup finds an API by name, ignoring case. Callers that must be as strict
// as CloudStack (which matches command names exactly) compare API.Name.
func (s *Schema) Lookup(name string) (*API, bool) {
	api, ok := s.byName[strings.ToLower(name)]
	return api, ok
}

// All returns every API sorted by name. The slice is shared: do not modify it.
func (s *Schema) All() []*API { return s.all }

// newest is the Newest schema, for the package-level functions.
func newest() *Schema {
	s, err := For(Newest)
	if err != nil {
		return &Schema{Version: Newest, byName: map[string]*API{}}
	}
	return s
}

// Lookup finds an API of the Newest release by name, ignoring case.
func Lookup(name string) (*API, bool) { return newest().Lookup(name) }

// All returns every API of the Newest release sorted by name.
func All() []*API { return newest().All() }

// Err reports whether every embedded schema could be read; it is nil unless
// a generated file is corrupt.
func Err() error {
	for _, v := range Versions() {
		if _, err := For(v); err != nil {
			return err
		}
	}
	return nil
}

// Response is the API's "response" array as this release's listApis
// answers it: the response object's fields, each with its name,
// description and type (ApiDiscoveryServiceImpl's ApiResponseResponse).
// The release's file is read on first use; an API it does not describe,
// or a file that cannot be read, has none.
func (s *Schema) Response(name string) (json.RawMessage, bool) {
	s.responsesOnce.Do(func() { s.responses, _ = readResponses(s.responsesFile) })
	r, ok := s.responses[name]
	return r, ok && len(r) > 0
}

// readResponses reads an embedded response arrays' file: API name to
// array.
func readResponses(file string) (map[string]json.RawMessage, error) {
	b, err := readGz(file)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	return m, json.Unmarshal(b, &m)
}
