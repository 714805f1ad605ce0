package cloudstack_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

const projectUUID = "5d1e7c3a-9b2f-4e6d-8a1c-0f2e3d4c5b6a"

// projectCloud answers listProjects with projects and listVirtualMachines
// with no VM, recording every request.
type projectCloud struct {
	mu       sync.Mutex
	projects []string // names, all with ids derived from projectUUID
	seen     []url.Values
}

func (f *projectCloud) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f.mu.Lock()
		f.seen = append(f.seen, q)
		f.mu.Unlock()
		switch q.Get("command") {
		case "listProjects":
			var rows []string
			for i, name := range f.projects {
				rows = append(rows, fmt.Sprintf(`{"id":"%s%d","name":%q}`, projectUUID[:len(projectUUID)-1], i, name))
			}
			if len(rows) == 0 {
				fmt.Fprint(w, `{"listprojectsresponse":{}}`)
				return
			}
			fmt.Fprintf(w, `{"listprojectsresponse":{"count":%d,"project":[%s]}}`, len(rows), strings.Join(rows, ","))
		case "listVirtualMachines":
			fmt.Fprint(w, vmList())
		case "listSSHKeyPairs":
			fmt.Fprint(w, `{"listsshkeypairsresponse":{}}`)
		default:
			t.Errorf("unexpected command %s", q.Get("command"))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (f *projectCloud) commands() (cmds []string, projectIDs []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range f.seen {
		cmds = append(cmds, q.Get("command"))
		projectIDs = append(projectIDs, q.Get("projectid"))
	}
	return cmds, projectIDs
}

// TestProjectIsResolvedOnceAndSentOnEveryCall: the project named in
// cloudstack.project is looked up once (exact name, listall) and its id
// rides on every command that takes projectid.
func TestProjectIsResolvedOnceAndSentOnEveryCall(t *testing.T) {
	f := &projectCloud{projects: []string{"bosh-two", "bosh"}}
	srv := f.serve(t)
	c, _ := newClient(t, srv.URL+"/client/api", func(cs *config.CloudStack) { cs.Project = "bosh" })
	for range 2 {
		if vm, err := c.FindVM("vm-1"); err != nil || vm != nil {
			t.Fatalf("FindVM: %+v, %v", vm, err)
		}
	}
	cmds, ids := f.commands()
	want := projectUUID[:len(projectUUID)-1] + "1"
	if strings.Join(cmds, ",") != "listProjects,listVirtualMachines,listVirtualMachines" || ids[1] != want || ids[2] != want {
		t.Fatalf("commands %v with projectids %v; want one listProjects, then projectid %s", cmds, ids, want)
	}
	if q := f.seen[0]; q.Get("name") != "bosh" || q.Get("listall") != "true" {
		t.Fatalf("listProjects asked %v", q)
	}
}

func TestProjectErrorsNameTheSetting(t *testing.T) {
	for _, c := range []struct {
		name     string
		projects []string
		want     string
	}{
		{"none", nil, `cloudstack.project "bosh": no CloudStack project has that name or id`},
		{"namesakes", []string{"bosh", "bosh"}, `cloudstack.project "bosh": 2 CloudStack projects are named "bosh"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &projectCloud{projects: c.projects}
			srv := f.serve(t)
			client, _ := newClient(t, srv.URL+"/client/api", func(cs *config.CloudStack) { cs.Project = "bosh" })
			_, err := client.FindVM("vm-1")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if cmds, _ := f.commands(); len(cmds) != 1 {
				t.Fatalf("commands %v: nothing may be sent outside the project", cmds)
			}
		})
	}
}

func TestNoProjectSendsNoProjectID(t *testing.T) {
	f := &projectCloud{}
	srv := f.serve(t)
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	if _, err := c.FindVM("vm-1"); err != nil {
		t.Fatal(err)
	}
	if cmds, ids := f.commands(); len(cmds) != 1 || cmds[0] != "listVirtualMachines" || ids[0] != "" {
		t.Fatalf("commands %v projectids %v", cmds, ids)
	}
}

// TestProjectByID: an id in cloudstack.project is asked for as id, and a
// project named like it is no match.
func TestProjectByID(t *testing.T) {
	id := projectUUID[:len(projectUUID)-1] + "0"
	f := &projectCloud{projects: []string{"bosh"}}
	srv := f.serve(t)
	c, _ := newClient(t, srv.URL+"/client/api", func(cs *config.CloudStack) { cs.Project = id })
	if _, err := c.FindVM("vm-1"); err != nil {
		t.Fatal(err)
	}
	if q := f.seen[0]; q.Get("id") != id || q.Get("name") != "" || f.seen[1].Get("projectid") != id {
		t.Fatalf("listProjects asked %v, then projectid %q", q, f.seen[1].Get("projectid"))
	}
}

// TestOrphansAndDoctorLookInTheProject: the listings orphans reads and
// doctor's key pair lookup carry the project too, or in a project they
// would see nothing the CPI made or uses.
func TestOrphansAndDoctorLookInTheProject(t *testing.T) {
	f := &projectCloud{projects: []string{"bosh"}}
	srv := f.serve(t)
	c, _ := newClient(t, srv.URL+"/client/api", func(cs *config.CloudStack) { cs.Project = "bosh" })
	if _, err := c.AllVMs(); err != nil {
		t.Fatal(err)
	}
	cmds, ids := f.commands()
	want := projectUUID[:len(projectUUID)-1] + "0"
	if len(cmds) != 2 || cmds[1] != "listVirtualMachines" || ids[1] != want {
		t.Fatalf("AllVMs sent %v with projectids %v, want listVirtualMachines in project %s", cmds, ids, want)
	}
	if _, err := c.HasKeyPair("bosh"); err != nil {
		t.Fatal(err)
	}
	if cmds, ids = f.commands(); len(cmds) != 3 || cmds[2] != "listSSHKeyPairs" || ids[2] != want {
		t.Fatalf("HasKeyPair sent %v with projectids %v, want listSSHKeyPairs in project %s", cmds, ids, want)
	}
}
