package dispatch

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testconfig"
)

// update_disk reaches the CPI through the dispatcher's own argument decoding
// and envelope, and a request api_version it does not serve is refused as
// for every method. Bad input fails before CloudStack is asked (the
// configured endpoint answers nothing).
func TestUpdateDiskIsDispatched(t *testing.T) {
	good := testconfig.Write(t, testconfig.Good)
	for name, c := range map[string]struct{ stdin, typ, want string }{
		"api version 3":     {`{"method":"update_disk","arguments":["d",1024,{}],"api_version":3}`, "NotImplemented", "max supported is '2'"},
		"too few arguments": {`{"method":"update_disk","arguments":["d",1024]}`, "CloudError", "update_disk takes 3 (disk_cid, new_size, cloud_properties), got 2"},
		"size not a number": {`{"method":"update_disk","arguments":["d","big",{}]}`, "CloudError", "arguments[1] (new_size): expected an integer, got a string"},
		"unknown key": {`{"method":"update_disk","arguments":["d",1024,{"disk_ofering":"fast"}],"api_version":2}`,
			"CloudError", `unknown field "disk_ofering"`},
		"no size": {`{"method":"update_disk","arguments":["d",0,{}]}`, "CloudError", "must be a positive number of MiB"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, _ := call(t, Files{ConfigPath: good}, c.stdin)
			if resp.Error == nil || resp.Error.Type != "Bosh::Clouds::"+c.typ || !strings.Contains(resp.Error.Message, c.want) {
				t.Fatalf("got %+v, want %s containing %q", resp.Error, c.typ, c.want)
			}
		})
	}
}
