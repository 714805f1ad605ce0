package orphans

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Known is the CIDs the director knows, read from -known files, and the
// kinds they cover. A resource of the director's (a complete VM, a
// detached disk, a snapshot, a stemcell) is compared with them only when
// some file covers its kind: a file of one CID per line covers every
// kind; the JSON of the bosh CLI covers the kinds whose columns it has
// (vm_cid: VMs; disk_cid, disk_cids: disks; cid: snapshots in the table
// of `bosh snapshots`, else stemcells; stemcell_cid: stemcells).
type Known struct {
	ids    map[string]bool
	covers map[string]bool
}

// directorKinds are the kinds of what the director holds CIDs of.
var directorKinds = []string{KindVM, KindVolume, KindSnapshot, KindTemplate}

// columnKinds are the bosh CLI's --json column names that hold CIDs.
var columnKinds = map[string]string{
	"vm_cid":       KindVM,
	"disk_cid":     KindVolume,
	"disk_cids":    KindVolume,
	"cid":          KindTemplate,
	"stemcell_cid": KindTemplate,
}

// snapshotsTable is the Content of `bosh snapshots --json`'s table
// (bosh-cli's SnapshotsCmd), whose "cid" column holds snapshot CIDs;
// `bosh stemcells --json` has a "cid" column too.
const snapshotsTable = "snapshots"

// columnKind is the kind of the CIDs in a column of a table of the bosh
// CLI's --json, given the table's Content.
func columnKind(column, table string) (string, bool) {
	column = strings.ToLower(column)
	if column == "cid" && table == snapshotsTable {
		return KindSnapshot, true
	}
	kind, ok := columnKinds[column]
	return kind, ok
}

// Has says the director knows one of the ids.
func (k *Known) Has(ids ...string) bool {
	for _, id := range ids {
		if k.ids[id] {
			return true
		}
	}
	return false
}

// Covers says some -known file names the director's CIDs of the kind.
func (k *Known) Covers(kind string) bool { return k.covers[kind] }

// Unknown says the files cover the kind and name none of the ids.
func (k *Known) Unknown(kind string, ids ...string) bool { return k.Covers(kind) && !k.Has(ids...) }

// ReadFile adds a -known file: JSON (an object or an array, as `bosh
// disks --orphaned --json`, `bosh instances --details --json`, `bosh
// -d DEPLOYMENT snapshots --json`, `bosh stemcells --json` or `bosh vms
// --json` print it) or one CID per line
// (blank lines and lines starting with # are skipped).
func (k *Known) ReadFile(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("-known: %w", err)
	}
	if k.ids == nil {
		k.ids, k.covers = map[string]bool{}, map[string]bool{}
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		var doc any
		if err := json.Unmarshal(trimmed, &doc); err != nil {
			return fmt.Errorf("-known %s: not JSON: %w", path, err)
		}
		if !k.walk(doc, "") {
			return fmt.Errorf("-known %s: no CID column (%s) in it", path, strings.Join(columnNames(), ", "))
		}
		return nil
	}
	for _, line := range strings.Split(string(raw), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		k.ids[fields[0]] = true
	}
	for _, kind := range directorKinds {
		k.covers[kind] = true
	}
	return nil
}

// walk adds the CIDs of every CID column in doc, at any depth (the CLI
// nests rows in Tables[].Rows[], each table with its Content, which table
// names); false when it found no such column.
func (k *Known) walk(doc any, table string) bool {
	found := false
	switch v := doc.(type) {
	case map[string]any:
		if content, ok := v["Content"].(string); ok {
			table = content
		}
		for key, value := range v {
			if key == "Header" {
				continue // the CLI's column titles: {"vm_cid": "VM CID"}
			}
			if kind, ok := columnKind(key, table); ok {
				if s, isString := value.(string); isString {
					k.covers[kind], found = true, true
					k.addCIDs(s)
					continue
				}
			}
			found = k.walk(value, table) || found
		}
	case []any:
		for _, item := range v {
			found = k.walk(item, table) || found
		}
	}
	return found
}

// addCIDs adds a cell's CIDs: `bosh instances --details` lists an
// instance's disks in one cell, one per line.
func (k *Known) addCIDs(cell string) {
	for _, cid := range strings.FieldsFunc(cell, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		k.ids[cid] = true
	}
}

func columnNames() []string {
	return []string{"vm_cid", "disk_cid", "disk_cids", "cid", "stemcell_cid"}
}
