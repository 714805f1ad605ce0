package cloudstack_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

const jobID = "5d1f5b7b-6a39-4a3b-9a0c-3d7c5c6f2a10"

// jobServer answers queryAsyncJobResult with pending for the first n polls,
// then with final.
func jobServer(t *testing.T, pending int32, final string) (*httptest.Server, *atomic.Int32) {
	var polls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Form.Get("command") != "queryAsyncJobResult" || r.Form.Get("jobid") != jobID {
			t.Errorf("unexpected request %v", r.Form)
		}
		if polls.Add(1) <= pending {
			fmt.Fprintf(w, `{"queryasyncjobresultresponse":{"jobid":%q,"jobstatus":0,"jobprocstatus":0,"jobresultcode":0}}`, jobID)
			return
		}
		fmt.Fprint(w, final)
	}))
	t.Cleanup(srv.Close)
	return srv, &polls
}

func TestWaitJobReturnsTheResult(t *testing.T) {
	srv, polls := jobServer(t, 2, fmt.Sprintf(`{"queryasyncjobresultresponse":{"jobid":%q,"jobstatus":1,
	  "jobresultcode":0,"jobresulttype":"object","jobresult":{"virtualmachine":{"id":"x"}}}}`, jobID))
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	result, err := c.WaitJob("deployVirtualMachine", jobID)
	if err != nil || !strings.Contains(string(result), `"virtualmachine"`) || polls.Load() != 3 {
		t.Fatalf("result %s err %v polls %d", result, err, polls.Load())
	}
}

func TestWaitJobFailureCarriesCloudStackError(t *testing.T) {
	srv, _ := jobServer(t, 0, fmt.Sprintf(`{"queryasyncjobresultresponse":{"jobid":%q,"jobstatus":2,
	  "jobresultcode":530,"jobresulttype":"object","jobresult":{"errorcode":533,"errortext":"no capacity"}}}`, jobID))
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	_, err := c.WaitJob("deployVirtualMachine", jobID)
	var api *cloudstack.APIError
	if !errors.As(err, &api) || api.ErrorCode != 533 || api.JobID != jobID || !api.IsCapacity() ||
		!strings.Contains(err.Error(), "no capacity") || cloudstack.IsJobInterrupted(err) {
		t.Fatalf("got %v", err)
	}
}

func TestWaitJobFailureWithoutAResultSaysSo(t *testing.T) {
	srv, _ := jobServer(t, 0, fmt.Sprintf(`{"queryasyncjobresultresponse":{"jobid":%q,"jobstatus":2,
	  "jobresultcode":530}}`, jobID))
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	_, err := c.WaitJob("deployVirtualMachine", jobID)
	var api *cloudstack.APIError
	if !errors.As(err, &api) || api.ErrorCode != 530 || !strings.Contains(err.Error(), "without a result") ||
		!cloudstack.IsJobInterrupted(err) {
		t.Fatalf("got %v", err)
	}
}

func TestWaitJobTimeoutKeepsTheJobID(t *testing.T) {
	srv, polls := jobServer(t, 1<<30, "")
	c, _ := newClient(t, srv.URL+"/client/api", func(cs *config.CloudStack) {
		cs.JobTimeout = config.Duration(500 * time.Millisecond)
		cs.JobPollInterval = config.Duration(20 * time.Millisecond)
		cs.JobPollMaxInterval = config.Duration(100 * time.Millisecond)
	})
	start := time.Now()
	_, err := c.WaitJob("deployVirtualMachine", jobID)
	var timeout *cloudstack.JobTimeoutError
	if !errors.As(err, &timeout) || timeout.JobID != jobID || !strings.Contains(err.Error(), jobID) {
		t.Fatalf("got %v", err)
	}
	if took := time.Since(start); took > 700*time.Millisecond {
		t.Errorf("waited %s past a 500ms job timeout", took)
	}
	// Intervals of a fifth of the elapsed time, 20 ms to 100 ms: about 14
	// polls in 500 ms, never the 25 a fixed 20 ms gives.
	if n := polls.Load(); n < 4 || n > 20 {
		t.Errorf("%d polls in 500ms; want the interval to start small and grow to its cap", n)
	}
}
