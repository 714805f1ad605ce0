package cloudstack_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Two VMs of the same exact name (CloudStack does not make host names
// unique across networks or accounts) are refused, never guessed between;
// a near miss beside one of them does not count.
func TestFindVMRefusesNamesakes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, vmList("cpivm-abc", "cpivm-abc-2", "cpivm-abc"))
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	vm, err := c.FindVM("cpivm-abc")
	if vm != nil || err == nil || !strings.Contains(err.Error(), `2 CloudStack VMs are named "cpivm-abc"`) {
		t.Fatalf("got %+v, %v", vm, err)
	}
	if vm, err := c.FindVM("cpivm-abc-2"); err != nil || vm == nil || vm.Name != "cpivm-abc-2" {
		t.Fatalf("the one cpivm-abc-2: %+v, %v", vm, err)
	}
}

// Two compute offerings of one name are refused too; an absent one is
// named in the error.
func TestFindServiceOfferingRefusesNamesakes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"listserviceofferingsresponse":{"count":2,"serviceoffering":[
{"id":"a","name":"Small","cpunumber":1,"cpuspeed":500,"memory":512},
{"id":"b","name":"Small","cpunumber":1,"cpuspeed":500,"memory":512}]}}`)
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	if o, err := c.FindServiceOffering("Small"); o != nil || err == nil ||
		!strings.Contains(err.Error(), `2 CloudStack compute offerings are named "Small"`) {
		t.Fatalf("got %+v, %v", o, err)
	}
	if o, err := c.FindServiceOffering("Large"); o != nil || err == nil || !strings.Contains(err.Error(), `no compute offering "Large"`) {
		t.Fatalf("got %+v, %v", o, err)
	}
}
