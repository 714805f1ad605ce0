package cloudstack_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// Every shape ServiceOfferingJoinDaoImpl.newServiceOfferingResponse gives a
// user VM offering createServiceOffering can make: Gson leaves out a null
// cpunumber, cpuspeed or memory, and a constrained offering's limits are in
// serviceofferingdetails.
const offeringsAnswer = `{"listserviceofferingsresponse":{"count":7,"serviceoffering":[
{"id":"fixed","name":"Fixed","cpunumber":2,"cpuspeed":1000,"memory":2048,"iscustomized":false},
{"id":"fixed-zero-speed","name":"Zero speed","cpunumber":1,"cpuspeed":0,"memory":512,"iscustomized":false},
{"id":"free","name":"Free","iscustomized":true},
{"id":"cc","name":"Constrained","cpuspeed":1500,"iscustomized":true,
 "serviceofferingdetails":{"mincpunumber":"2","maxcpunumber":"8","minmemory":"1024","maxmemory":"16384"}},
{"id":"cc-zero","name":"Constrained zero speed","cpuspeed":0,"iscustomized":true,
 "serviceofferingdetails":{"mincpunumber":"1","maxcpunumber":"2","minmemory":"512","maxmemory":"1024","other":"x"}},
{"id":"cpu-open","name":"CPU open","cpuspeed":800,"memory":1024,"iscustomized":true},
{"id":"mem-open","name":"Memory open","cpunumber":2,"cpuspeed":900,"iscustomized":true}]}}`

func offeringsServer(t *testing.T) *cloudstack.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Form.Get("command") != "listServiceOfferings" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, offeringsAnswer)
	}))
	t.Cleanup(srv.Close)
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	return c
}

func TestServiceOfferingsReadWhatIsOpen(t *testing.T) {
	offerings, err := offeringsServer(t).ServiceOfferings()
	if err != nil || len(offerings) != 7 {
		t.Fatalf("offerings = %+v, %v", offerings, err)
	}
	byID := map[string]cloudstack.ServiceOffering{}
	for _, o := range offerings {
		byID[o.ID] = o
	}
	want := map[string]cloudstack.ServiceOffering{
		"fixed": {ID: "fixed", Name: "Fixed", CPUs: 2, CPUSpeed: 1000, MemoryMB: 2048,
			CPUsFixed: true, SpeedFixed: true, MemoryFixed: true, MinCPUs: 1, MinMemoryMB: 32},
		"fixed-zero-speed": {ID: "fixed-zero-speed", Name: "Zero speed", CPUs: 1, MemoryMB: 512,
			CPUsFixed: true, SpeedFixed: true, MemoryFixed: true, MinCPUs: 1, MinMemoryMB: 32},
		"free": {ID: "free", Name: "Free", Customized: true, MinCPUs: 1, MinMemoryMB: 32},
		"cc": {ID: "cc", Name: "Constrained", CPUSpeed: 1500, Customized: true, SpeedFixed: true, Constrained: true,
			MinCPUs: 2, MaxCPUs: 8, MinMemoryMB: 1024, MaxMemoryMB: 16384},
		"cc-zero": {ID: "cc-zero", Name: "Constrained zero speed", Customized: true, SpeedFixed: true, Constrained: true,
			MinCPUs: 1, MaxCPUs: 2, MinMemoryMB: 512, MaxMemoryMB: 1024},
		"cpu-open": {ID: "cpu-open", Name: "CPU open", CPUSpeed: 800, MemoryMB: 1024, Customized: true,
			SpeedFixed: true, MemoryFixed: true, MinCPUs: 1, MinMemoryMB: 32},
		"mem-open": {ID: "mem-open", Name: "Memory open", CPUs: 2, CPUSpeed: 900, Customized: true,
			CPUsFixed: true, SpeedFixed: true, MinCPUs: 1, MinMemoryMB: 32},
	}
	for id, w := range want {
		if byID[id] != w {
			t.Errorf("%s:\n got %+v\nwant %+v", id, byID[id], w)
		}
	}
}

func TestServiceOfferingLimits(t *testing.T) {
	offerings, err := offeringsServer(t).ServiceOfferings()
	if err != nil {
		t.Fatal(err)
	}
	o := map[string]cloudstack.ServiceOffering{}
	for _, so := range offerings {
		o[so.ID] = so
	}
	cases := []struct {
		id               string
		cpus, mem, speed int
		refusal          string // "" when it takes them
	}{
		{"free", 64, 1 << 20, 3000, ""},
		{"free", 1, 16, 0, `compute offering "Free" takes 1 or more CPUs and 32 or more MiB of memory; the VM asks for 16 MiB of memory`},
		{"cc", 2, 1024, 0, ""},
		{"cc", 8, 16384, 1500, ""},
		{"cc", 9, 1024, 0, `compute offering "Constrained" takes 2 to 8 CPUs and 1024 to 16384 MiB of memory at 1500 MHz; the VM asks for 9 CPUs`},
		{"cc", 1, 512, 2000, `the VM asks for 1 CPUs and 512 MiB of memory and 2000 MHz`},
		{"cc-zero", 2, 1024, 0, ""},
		{"cc-zero", 2, 1024, 1, "at 0 MHz; the VM asks for 1 MHz"},
		{"cpu-open", 3, 1024, 0, ""},
		{"cpu-open", 3, 2048, 0, `takes 1 or more CPUs and exactly 1024 MiB of memory at 800 MHz; the VM asks for 2048 MiB of memory`},
		{"mem-open", 2, 4096, 900, ""},
		{"mem-open", 4, 4096, 0, `takes exactly 2 CPUs and 32 or more MiB of memory at 900 MHz; the VM asks for 4 CPUs`},
	}
	for _, tc := range cases {
		err := o[tc.id].CheckCustom(tc.cpus, tc.mem, tc.speed)
		switch {
		case tc.refusal == "" && err != nil:
			t.Errorf("%s refuses %d/%d/%d: %v", tc.id, tc.cpus, tc.mem, tc.speed, err)
		case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
			t.Errorf("%s %d/%d/%d: got %v, want %q", tc.id, tc.cpus, tc.mem, tc.speed, err, tc.refusal)
		}
		if o[tc.id].Takes(tc.cpus, tc.mem, tc.speed) != (tc.refusal == "") {
			t.Errorf("%s: Takes disagrees with CheckCustom", tc.id)
		}
	}
}
