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

// TestEachReleaseHasItsOwnAPI: each release's file is that release's dump
// (cloudstack-go's listApis.json: 754, 856 and 912 commands), not a copy
// of another's; updateLoadBalancerRule's cidrlist is 4.22's (since 4.22).
func TestEachReleaseHasItsOwnAPI(t *testing.T) {
	want := map[Version]struct {
		apis    int
		release string
		cidrs   bool
	}{V419: {754, "4.19.0.0", false}, V420: {856, "4.20.1.0", false}, V422: {912, "4.22.0.0", true}}
	for _, v := range Versions() {
		s, err := For(v)
		if err != nil {
			t.Fatal(err)
		}
		w := want[v]
		if len(s.All()) != w.apis || s.Release != w.release || s.Version != v {
			t.Errorf("%s: %d APIs, release %s; want %d, %s", v, len(s.All()), s.Release, w.apis, w.release)
		}
		lb, ok := s.Lookup("updateLoadBalancerRule")
		if !ok {
			t.Fatalf("%s: no updateLoadBalancerRule", v)
		}
		if _, has := lb.Param("cidrlist"); has != w.cidrs {
			t.Errorf("%s: updateLoadBalancerRule cidrlist %v, want %v", v, has, w.cidrs)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{"4.20": V420, "4.20.1.0": V420, "4.22.0.0": V422, "4.19": V419} {
		if got, err := ParseVersion(in); err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"4.21", "4", "", "4.18.1.0", "x.y"} {
		if got, err := ParseVersion(in); err == nil {
			t.Errorf("ParseVersion(%q) = %q, want an error", in, got)
		}
	}
}

func TestAtLeast(t *testing.T) {
	for _, c := range []struct {
		v     Version
		since string
		want  bool
	}{{V420, "4.21", false}, {V422, "4.21", true}, {V422, "4.22", true}, {V419, "4.9", true}, {V420, "", true}} {
		if got := c.v.AtLeast(c.since); got != c.want {
			t.Errorf("%s.AtLeast(%q) = %v, want %v", c.v, c.since, got, c.want)
		}
	}
}

// TestResponsesAreKeptApart: listApis' response arrays come from each
// release's own responses file, one per API of that release's schema:
// listCapabilities' fields are 4.22's extensionspath only in 4.22 and
// 4.20's allowuserforcestopvm not in 4.19.
func TestResponsesAreKeptApart(t *testing.T) {
	want := map[Version]struct{ extensionsPath, forceStop bool }{
		V419: {false, false}, V420: {false, true}, V422: {true, true}}
	for _, v := range Versions() {
		s, err := For(v)
		if err != nil {
			t.Fatal(err)
		}
		caps, ok := s.Response("listCapabilities")
		has := func(field string) bool { return strings.Contains(string(caps), `"name":"`+field+`"`) }
		if w := want[v]; !ok || !has("cloudstackversion") || has("extensionspath") != w.extensionsPath ||
			has("allowuserforcestopvm") != w.forceStop {
			t.Errorf("%s: listCapabilities response = %.300s, %v", v, caps, ok)
		}
		for _, api := range s.All() {
			if _, ok := s.Response(api.Name); !ok {
				t.Errorf("%s: %s has no response array", v, api.Name)
			}
		}
		if _, ok := s.Response("noSuchApi"); ok {
			t.Fatalf("%s: an unknown API has a response", v)
		}
	}
}
