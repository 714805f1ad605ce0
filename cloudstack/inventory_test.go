package cloudstack_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

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
