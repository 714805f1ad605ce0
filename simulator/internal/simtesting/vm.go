package simtesting

import (
	"io"
	"testing"
)

// StateOf is the state of VM id as listVirtualMachines shows it.
func (e *VMEnv) StateOf(t *testing.T, id string) string {
	t.Helper()
	p := e.Raw.VirtualMachine.NewListVirtualMachinesParams()
	p.SetId(id)
	l, err := e.Raw.VirtualMachine.ListVirtualMachines(p)
	if err != nil {
		t.Fatal(err)
	}
	if l.Count == 0 {
		return ""
	}
	return l.VirtualMachines[0].State
}

// MetadataFetch GETs a path of VM vmID's metadata service; it returns the
// body and the status.
func (e *VMEnv) MetadataFetch(t *testing.T, vmID, path string) (string, int) {
	t.Helper()
	resp, err := e.HTTP.Client().Get(e.HTTP.URL + "/metadata/" + vmID + "/" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode
}
