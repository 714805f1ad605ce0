package cloudstack_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// TestProcessGoneAndAlive: this process is alive; a pid no process has on
// this host is gone; another host's process and an unreadable owner are
// neither, so no rule acts on them.
func TestProcessGoneAndAlive(t *testing.T) {
	host, _ := os.Hostname()
	for _, c := range []struct {
		owner       string
		gone, alive bool
	}{
		{cloudstack.ThisProcess(), false, true},
		{"999999999@" + host, true, false},
		{"1@another-host", false, false},
		{"not a process", false, false},
		{"", false, false},
		{"-5@" + host, false, false},
	} {
		if got := cloudstack.ProcessGone(c.owner); got != c.gone {
			t.Errorf("ProcessGone(%q) = %v", c.owner, got)
		}
		if got := cloudstack.ProcessAlive(c.owner); got != c.alive {
			t.Errorf("ProcessAlive(%q) = %v", c.owner, got)
		}
	}
}

// TestLeftByCreateDisk: a create_disk's disk for a VM, unused and detached,
// is left when its process is gone or it is older than the longest call;
// used, attached, made without a VM or by someone else, it never is.
func TestLeftByCreateDisk(t *testing.T) {
	host, _ := os.Hostname()
	now := time.Now()
	name := func(owner string) string { return "bosh-disk-1f0c-by-" + owner + "-for-vm-9" }
	dead, self := "999999999@"+host, cloudstack.ThisProcess()
	for _, c := range []struct {
		vol          cloudstack.Volume
		unused, left bool
	}{
		{cloudstack.Volume{Name: name(dead), State: "Allocated", Created: now}, true, true},
		{cloudstack.Volume{Name: name(self), State: "Allocated", Created: now}, true, false},
		{cloudstack.Volume{Name: name(self), State: "Allocated", Created: now.Add(-time.Hour)}, true, true},
		{cloudstack.Volume{Name: name("1@elsewhere"), State: "Allocated"}, true, false},
		{cloudstack.Volume{Name: name(dead), State: "Ready", Created: now}, false, false},
		{cloudstack.Volume{Name: name(dead), State: "Allocated", VMID: "vm-9"}, false, false},
		{cloudstack.Volume{Name: "bosh-disk-1f0c", State: "Allocated"}, false, false},
		{cloudstack.Volume{Name: "data-by-" + dead + "-for-vm-9", State: "Allocated"}, false, false},
	} {
		if got := c.vol.UnusedDiskForVM(); got != c.unused {
			t.Errorf("%s (%s, vm %q) UnusedDiskForVM = %v", c.vol.Name, c.vol.State, c.vol.VMID, got)
		}
		if got := c.vol.LeftByCreateDisk(now, time.Minute); got != c.left {
			t.Errorf("%s (%s, vm %q) LeftByCreateDisk = %v", c.vol.Name, c.vol.State, c.vol.VMID, got)
		}
	}
	if got := cloudstack.DiskCreator(name(dead)); got != dead {
		t.Errorf("DiskCreator = %q, want %q", got, dead)
	}
}

// TestTemplateMarkRunning: a mark's call runs until its time is up, unless
// its process is gone from this host.
func TestTemplateMarkRunning(t *testing.T) {
	host, _ := os.Hostname()
	now := time.Now()
	for _, c := range []struct {
		m    cloudstack.TemplateMark
		want bool
	}{
		{cloudstack.TemplateMark{Owner: cloudstack.ThisProcess(), Until: now.Add(time.Minute)}, true},
		{cloudstack.TemplateMark{Owner: "1@elsewhere", Until: now.Add(time.Minute)}, true},
		{cloudstack.TemplateMark{Owner: "999999999@" + host, Until: now.Add(time.Minute)}, false},
		{cloudstack.TemplateMark{Owner: cloudstack.ThisProcess(), Until: now.Add(-time.Minute)}, false},
	} {
		if got := c.m.Running(now); got != c.want {
			t.Errorf("%+v Running = %v", c.m, got)
		}
	}
	s := cloudstack.Snapshot{Tags: map[string]string{cloudstack.IncompleteTag: "7@h"}}
	if owner, ok := s.IncompleteOwner(); !ok || owner != "7@h" {
		t.Errorf("IncompleteOwner = %q, %v", owner, ok)
	}
	if _, ok := (&cloudstack.Snapshot{}).IncompleteOwner(); ok {
		t.Error("a snapshot without the mark has an owner")
	}
}

// TestInventoryReadsEveryPage: CloudStack caps an answer without paging
// parameters at default.page.size rows and refuses a larger pagesize
// (BaseListCmd); the inventory pages on with the size of the first answer
// until it has count rows, whatever default.page.size is; the account's
// ISOs (a config drive per VM) too.
func TestInventoryReadsEveryPage(t *testing.T) {
	const maxPage, total, paramError = 2, 5, 431
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		page, _ := strconv.Atoi(q.Get("page"))
		size, _ := strconv.Atoi(q.Get("pagesize"))
		if size > maxPage {
			w.WriteHeader(paramError) // CloudStack's ApiErrorCode.PARAM_ERROR
			fmt.Fprintf(w, `{"listvirtualmachinesresponse":{"errorcode":431,"errortext":"Page size can't exceed max allowed page size value: %d"}}`, maxPage)
			return
		}
		if page == 0 {
			page, size = 1, maxPage
		}
		var rows []string
		for i := (page - 1) * size; i < min(page*size, total); i++ {
			rows = append(rows, fmt.Sprintf(`{"id":"%08d-0000-4000-8000-000000000000","name":"row-%d","state":"Running"}`, i, i))
		}
		command := strings.ToLower(q.Get("command"))
		key := map[string]string{"listvirtualmachines": "virtualmachine", "listisos": "iso"}[command]
		fmt.Fprintf(w, `{"%sresponse":{"count":%d,"%s":[%s]}}`, command, total, key, strings.Join(rows, ","))
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	vms, err := c.AllVMs()
	if err != nil {
		t.Fatal(err)
	}
	isos, err := c.OwnISOs("")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, vm := range vms {
		seen[vm.Name] = true
	}
	if len(vms) != total || len(seen) != total || len(isos) != total {
		t.Fatalf("%d VMs (%d distinct), %d ISOs, want %d each", len(vms), len(seen), len(isos), total)
	}
}
