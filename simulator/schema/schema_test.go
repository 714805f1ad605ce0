package schema

import "testing"

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
