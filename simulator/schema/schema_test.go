package schema

import (
	"strings"
	"testing"
)

func TestSchemaHasCloudStack422APIs(t *testing.T) {
	if err := Err(); err != nil {
		t.Fatal(err)
	}
	if n := len(All()); n != 912 {
		t.Fatalf("APIs = %d, want 912 (CloudStack 4.22)", n)
	}
	api, ok := Lookup("DEPLOYVIRTUALMACHINE")
	if !ok || api.Name != "deployVirtualMachine" || !api.IsAsync {
		t.Fatalf("deployVirtualMachine = %+v, %v", api, ok)
	}
	p, ok := api.Param("ZoneId")
	if !ok || !p.Required || p.Type != "uuid" {
		t.Fatalf("zoneid = %+v, %v", p, ok)
	}
	if len(api.Raw) == 0 {
		t.Fatal("raw entry missing")
	}
	if _, ok := Lookup("noSuchCommand"); ok {
		t.Fatal("unknown command found")
	}
}

// TestResponsesAreKeptApart: listApis' response arrays come from
// responses.json.gz, one per API of the schema.
func TestResponsesAreKeptApart(t *testing.T) {
	r, ok := Response("listZones")
	if !ok || !strings.Contains(string(r), `"name":"allocationstate"`) {
		t.Fatalf("listZones response = %.200s, %v", r, ok)
	}
	for _, api := range All() {
		if _, ok := Response(api.Name); !ok {
			t.Errorf("%s has no response array", api.Name)
		}
	}
	if _, ok := Response("noSuchApi"); ok {
		t.Fatal("an unknown API has a response")
	}
}
