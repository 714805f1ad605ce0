package simulator_test

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

func TestMissingRequiredParameter(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	s.Call(map[string]string{"command": "queryAsyncJobResult"}).WantError(t, "queryasyncjobresultresponse", 431, 9999,
		"Unable to execute API command queryasyncjobresult due to missing parameter jobid")
	s.Call(map[string]string{"command": "getUserKeys"}).WantError(t, "getuserkeysresponse", 431, 9999,
		"Unable to execute API command getuserkeys due to missing parameter id")
}

func TestMalformedAndUnknownUUIDs(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	for _, id := range []string{"not-a-uuid", "", "6b2c6e5e-0d2a-4a4e-9d43-2b8a3c8e7f10"} {
		r := s.Call(map[string]string{"command": "listZones", "id": id})
		r.WantError(t, "listzonesresponse", 431, 9999, "Unable to execute API command listzones due to invalid value."+
			" Invalid parameter id value="+id+" due to incorrect long value format, or entity does not exist or due to"+
			" incorrect parameter annotation for the field in api cmd class.")
	}
	// An existing UUID of the wrong kind does not name a zone either.
	host := simtesting.Items(t, s.Call(map[string]string{"command": "listHosts"}).Inner(t, "listhostsresponse"), "host")[0]
	s.Call(map[string]string{"command": "listZones", "id": host["id"].(string)}).WantError(t, "listzonesresponse", 431, 9999, "")
	s.Call(map[string]string{"command": "listZones", "ids": "x,y"}).WantError(t, "listzonesresponse", 431, 9999, "")
}

func TestIllTypedValues(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cases := []struct {
		params map[string]string
		text   string
	}{
		{map[string]string{"command": "listZones", "page": "one", "pagesize": "5"},
			"Unable to execute API command listzones due to invalid value one for parameter page"},
		{map[string]string{"command": "listAsyncJobs", "startdate": "yesterday"},
			"Unable to parse date yesterday for command listasyncjobs, please pass dates in the format mentioned in the api documentation"},
		{map[string]string{"command": "listZones", "name": strings.Repeat("x", 256)},
			"Unable to execute API command listzones due to invalid value. Value greater than max allowed length 255 for param: name"},
	}
	// ParamProcessWorker rethrows each as a bare ServerApiException: 9999.
	for _, c := range cases {
		s.Call(c.params).WantError(t, kernel.ResponseName(c.params["command"]), 431, 9999, c.text)
	}
	ok := s.Call(map[string]string{"command": "listAsyncJobs", "startdate": "2024-01-02T03:04:05+0000", "listall": "TRUE"})
	if ok.Status != 200 {
		t.Fatalf("valid values refused: %s", ok.Raw)
	}
}

func TestMalformedMapParameter(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	s.Call(map[string]string{"command": "listZones", "tags[0]key": "a"}).WantError(t, "listzonesresponse", 430, 9999, "")
	if r := s.Call(map[string]string{"command": "listZones", "tags[0].key": "a", "tags[0].value": "b"}); r.Status != 200 {
		t.Fatalf("map parameter refused: %s", r.Raw)
	}
}

func TestUnimplementedCommandIs432(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	r := s.Call(map[string]string{"command": "listLdapConfigurations"})
	r.WantError(t, "errorresponse", 432, 4555, "The API command listLdapConfigurations is not implemented by the CloudStack simulator")
}

func TestListApisFromSchema(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	all := s.Call(map[string]string{"command": "listApis"}).Inner(t, "listapisresponse")
	if simtesting.Num(all["count"]) != 912 {
		t.Fatalf("count = %v", all["count"])
	}
	one := s.Call(map[string]string{"command": "listApis", "name": "deployVirtualMachine"}).Inner(t, "listapisresponse")
	api := simtesting.Items(t, one, "api")
	if simtesting.Num(one["count"]) != 1 || api[0]["name"] != "deployVirtualMachine" || api[0]["isasync"] != true || api[0]["params"] == nil {
		t.Fatalf("listApis name=deployVirtualMachine = %v", one)
	}
	// ApiDiscoveryServiceImpl.getFieldResponseMap: the response class's fields.
	resp, _ := api[0]["response"].([]any)
	if len(resp) == 0 || resp[0].(map[string]any)["name"] == nil || resp[0].(map[string]any)["type"] == nil {
		t.Fatalf("deployVirtualMachine's response fields = %v", api[0]["response"])
	}
	s.Call(map[string]string{"command": "listApis", "name": "nope"}).WantError(t, "listapisresponse", 530, 9999, "")
}

func TestPagingRules(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	s.Call(map[string]string{"command": "listZones", "pagesize": "5"}).WantError(t, "listzonesresponse", 431, 9999,
		`"page" parameter is required when "pagesize" is specified`)
	s.Call(map[string]string{"command": "listZones", "page": "1"}).WantError(t, "listzonesresponse", 431, 9999,
		`"pagesize" parameter is required when "page" is specified`)
	s.Call(map[string]string{"command": "listZones", "page": "1", "pagesize": "501"}).WantError(t, "listzonesresponse", 431, 4350,
		"Page size can't exceed max allowed page size value: 500")
	if r := s.Call(map[string]string{"command": "listZones", "pagesize": "-1"}); r.Status != 200 {
		t.Fatalf("pagesize=-1: %s", r.Raw)
	}
}

// TestCLIParameterProcessing: Debian's CLI sends what ParamProcessWorker and
// BaseListCmd accept although a stricter server would refuse it.
func TestCLIParameterProcessing(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	// Boolean.valueOf: "yes" is false, so only the category that is not featured.
	out, errOut, err := simtesting.RunCLI(t, s, simtesting.Secret, "listOsCategories", "isfeatured=yes")
	if err != nil || !strings.Contains(out, `"name": "Other"`) || strings.Contains(out, `"name": "Ubuntu"`) {
		t.Fatalf("isfeatured=yes: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	// getStartIndex: a negative page is the first page.
	out, errOut, err = simtesting.RunCLI(t, s, simtesting.Secret, "listOsTypes", "page=-3", "pagesize=1")
	if err != nil || !strings.Contains(out, `"description": "CentOS 5.6 (64-bit)"`) || !strings.Contains(out, `"count": 14`) {
		t.Fatalf("page=-3: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
}

// TestOsTypesOrderedByName: listGuestOSByCriteria sorts on the display name.
func TestOsTypesOrderedByName(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	types, err := cs.GuestOS.ListOsTypes(cs.GuestOS.NewListOsTypesParams())
	if err != nil || len(types.OsTypes) < 2 {
		t.Fatalf("listOsTypes: %+v, %v", types, err)
	}
	for i := 1; i < len(types.OsTypes); i++ {
		if a, b := strings.ToLower(types.OsTypes[i-1].Description), strings.ToLower(types.OsTypes[i].Description); a > b {
			t.Fatalf("%q listed before %q", types.OsTypes[i-1].Description, types.OsTypes[i].Description)
		}
	}
}

// TestControlCharactersRefused: ApiServer.checkCharacterInkParams refuses a
// value with a control character other than LF and CR, before the command.
func TestControlCharactersRefused(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	p := cs.Zone.NewListZonesParams()
	p.SetName("Sandbox\tsimulator")
	_, err := cs.Zone.ListZones(p)
	want := "CloudStack API error 431 (CSExceptionErrorCode: 9999): Received value containing illegal ASCII non-printable characters for parameter name"
	if err == nil || err.Error() != want {
		t.Fatalf("tab in name: %v", err)
	}
	p.SetName("Sandbox\r\nsimulator")
	if l, err := cs.Zone.ListZones(p); err != nil || l.Count != 0 {
		t.Fatalf("CR LF in name: %+v, %v", l, err)
	}
}
