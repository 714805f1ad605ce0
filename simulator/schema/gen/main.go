// Plumbing (no CloudStack behaviour): the schema is ApiDiscoveryServiceImpl.listApis's answer as cloudstack-go ships it.
//
// Command gen rebuilds apis.json.gz (or a release's apis-4.xx.json.gz), the
// CloudStack API schema the simulator validates requests against, and the
// APIs' response arrays listApis answers with.
//
// The schema is a CloudStack release's own listApis answer as shipped by
// cloudstack-go (generate/listApis.json in the module version -client
// names, or else the one go.mod pins). Each API's "response" array goes to
// a file of its own (-responses, API name to array): only listApis answers
// with it, and it makes up most of the file's 5.6 MB, which every start
// would otherwise parse.
//
// Run from the repository root:
//
//	go run ./simulator/schema/gen -client v2.17.1 -o simulator/schema/apis-4.20.json.gz
//
// writes 4.20's schema and, beside it, responses-4.20.json.gz.
package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
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
	client := flag.String("client", "", "cloudstack-go version whose listApis.json to read (default: go.mod's)")
	responsesFlag := flag.String("responses", "",
		"file to write the APIs' response arrays to (default: -o's name with \"apis\" as \"responses\")")
	flag.Parse()
	log.SetFlags(0)
	responsesOut := cmp.Or(*responsesFlag, responsesPath(*out))
	if responsesOut == *out {
		log.Fatalf("-o %s has no \"apis\" in its name: name the response arrays' file with -responses", *out)
	}

	dir, err := moduleDir(clientModule, *client)
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
	for path, b := range map[string][]byte{*out: doc, responsesOut: responses} {
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

// responsesPath is where the response arrays of the schema written to out
// go: apis-4.20.json.gz's beside it as responses-4.20.json.gz.
func responsesPath(out string) string {
	dir, base := filepath.Split(out)
	return filepath.Join(dir, strings.Replace(base, "apis", "responses", 1))
}

// moduleDir asks the go command where the module lives: the version given,
// downloaded (and checked against the checksum database) by the go command,
// or else the exact version go.mod names.
func moduleDir(module, version string) (string, error) {
	if version != "" {
		return downloadedDir(module + "@" + version)
	}
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

// downloadedDir is `go mod download -json`'s Dir, or the error it names.
func downloadedDir(modVersion string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", modVersion)
	cmd.Stderr = os.Stderr
	b, runErr := cmd.Output()
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("go mod download %s: %w", modVersion, errors.Join(runErr, err))
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %s", modVersion, m.Error)
	}
	return m.Dir, nil
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
