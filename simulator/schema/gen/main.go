// Plumbing (no CloudStack behaviour): the schema is ApiDiscoveryServiceImpl.listApis's answer as cloudstack-go ships it.
//
// Command gen rebuilds apis.json.gz, the CloudStack API schema the simulator
// validates requests against.
//
// The schema is CloudStack 4.22's own listApis answer as shipped by
// cloudstack-go (generate/listApis.json in the module pinned by go.mod). Each
// API's "response" array goes to a file of its own (responses.json.gz, API
// name to array): only listApis answers with it, and it makes up most of the
// file's 5.6 MB, which every start would otherwise parse.
//
// Run from the repository root:
//
//	go run ./simulator/schema/gen
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const clientModule = "github.com/apache/cloudstack-go/v2"

func main() {
	out := flag.String("o", filepath.Join("simulator", "schema", "apis.json.gz"), "file to write")
	responsesOut := flag.String("responses", filepath.Join("simulator", "schema", "responses.json.gz"),
		"file to write the APIs' response arrays to")
	flag.Parse()
	log.SetFlags(0)

	dir, err := moduleDir(clientModule)
	if err != nil {
		log.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "generate", "listApis.json"))
	if err != nil {
		log.Fatal(err)
	}
	doc, responses, err := trim(raw)
	if err != nil {
		log.Fatal(err)
	}
	for path, b := range map[string][]byte{*out: doc, *responsesOut: responses} {
		gz, err := compress(b)
		if err != nil {
			log.Fatal(err)
		}
		if err := writeAtomic(path, gz); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("wrote %s (%d bytes)\n", path, len(gz))
	}
}

// moduleDir asks the go command where the pinned module lives, so the
// generator always reads the schema of the exact version go.mod names.
func moduleDir(module string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %w", module, err)
	}
	dir := strings.TrimSpace(string(b))
	if dir == "" {
		return "", fmt.Errorf("module %s is not downloaded (run go mod download)", module)
	}
	return dir, nil
}

// trim moves every API's "response" array out of the schema, into a map
// from the API's name, and sorts the APIs by name so the output is stable
// whatever order the upstream file uses.
func trim(raw []byte) (schema, responses []byte, err error) {
	var doc struct {
		API []map[string]json.RawMessage `json:"api"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, nil, fmt.Errorf("parse listApis.json: %w", err)
	}
	byName := map[string]json.RawMessage{}
	for _, api := range doc.API {
		var name string
		if err := json.Unmarshal(api["name"], &name); err != nil {
			return nil, nil, fmt.Errorf("parse listApis.json: an API's name: %w", err)
		}
		byName[name] = api["response"]
		delete(api, "response")
	}
	sort.Slice(doc.API, func(i, j int) bool {
		return string(doc.API[i]["name"]) < string(doc.API[j]["name"])
	})
	if schema, err = json.Marshal(struct {
		Count int                          `json:"count"`
		API   []map[string]json.RawMessage `json:"api"`
	}{len(doc.API), doc.API}); err != nil {
		return nil, nil, err
	}
	responses, err = json.Marshal(byName) // map keys are sorted
	return schema, responses, err
}

// compress gzips without a name or time stamp so reruns give identical bytes.
func compress(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
