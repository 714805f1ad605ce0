package cloudstack_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// tagServer answers createTags, deleteTags and createSnapshot with a job
// that succeeds, and records the tags[i].key/value pairs each sent.
type tagServer struct {
	mu   sync.Mutex
	sent map[string][]map[string]string // command → pairs, one map per call
}

func newTagServer(t *testing.T) (*tagServer, string) {
	ts := &tagServer{sent: map[string][]map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		cmd := r.Form.Get("command")
		switch cmd {
		case "queryAsyncJobResult":
			fmt.Fprintf(w, `{"queryasyncjobresultresponse":{"jobid":%q,"jobstatus":1,"jobresultcode":0,
			  "jobresulttype":"object","jobresult":{"success":true,"snapshot":{"id":"s1","volumeid":"v1","state":"BackedUp"}}}}`, jobID)
		default:
			ts.mu.Lock()
			ts.sent[cmd] = append(ts.sent[cmd], tagParams(r.Form))
			ts.mu.Unlock()
			fmt.Fprintf(w, `{%q:{"jobid":%q}}`, strings.ToLower(cmd)+"response", jobID)
		}
	}))
	t.Cleanup(srv.Close)
	return ts, srv.URL + "/client/api"
}

// tagParams reads tags[i].key / tags[i].value as cloudstack-go sends them.
func tagParams(form url.Values) map[string]string {
	pairs := map[string]string{}
	for i := 0; ; i++ {
		k, ok := form[fmt.Sprintf("tags[%d].key", i)]
		if !ok {
			return pairs
		}
		pairs[k[0]] = form.Get(fmt.Sprintf("tags[%d].value", i))
	}
}

func TestSetTagsLeavesOutEmptyValuesAndCutsToTheColumn(t *testing.T) {
	ts, endpoint := newTagServer(t)
	c, _ := newClient(t, endpoint, nil)
	long := strings.Repeat("é", 300) // varchar(255) counts characters, not bytes
	current := map[string]string{"Deployment": "old", "kept": "same", "emptied": "was-set"}
	desired := map[string]string{"deployment": "cf", "kept": "same", "emptied": "", "never": "", long: long}
	if err := c.SetTags(cloudstack.ResourceVM, vmUUID, current, desired); err != nil {
		t.Fatal(err)
	}
	cut := strings.Repeat("é", cloudstack.MaxTagLength)
	del, create := ts.sent["deleteTags"], ts.sent["createTags"]
	if len(del) != 1 || len(del[0]) != 2 || del[0]["Deployment"] != "old" || del[0]["emptied"] != "was-set" {
		t.Errorf("deleteTags sent %v; want the changed key (as CloudStack spells it) and the emptied one", del)
	}
	if len(create) != 1 || len(create[0]) != 2 || create[0]["deployment"] != "cf" || create[0][cut] != cut {
		t.Errorf("createTags sent %v; want deployment and the cut long pair, no empty value", create)
	}
}

func TestSetTagsWithOnlyEmptyValuesSendsNothing(t *testing.T) {
	ts, endpoint := newTagServer(t)
	c, _ := newClient(t, endpoint, nil)
	if err := c.SetTags(cloudstack.ResourceVolume, vmUUID, nil, map[string]string{"a": "", "b": ""}); err != nil {
		t.Fatal(err)
	}
	if len(ts.sent) != 0 {
		t.Fatalf("sent %v", ts.sent)
	}
}

func TestSnapshotTagsLeaveOutEmptyValues(t *testing.T) {
	ts, endpoint := newTagServer(t)
	c, _ := newClient(t, endpoint, nil)
	if _, err := c.CreateSnapshot("v1", "bosh-snapshot-1", map[string]string{"director": "d", "index": ""}); err != nil {
		t.Fatal(err)
	}
	if got := ts.sent["createSnapshot"]; len(got) != 1 || len(got[0]) != 1 || got[0]["director"] != "d" {
		t.Fatalf("createSnapshot sent tags %v", got)
	}
}
