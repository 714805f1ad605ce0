package simtesting

import (
	"testing"
	"time"
)

// FirstHost is the first host listHosts answers.
func FirstHost(t *testing.T, s *Sim) map[string]any {
	t.Helper()
	return Items(t, s.Call(map[string]string{"command": "listHosts"}).Inner(t, "listhostsresponse"), "host")[0]
}

// QueryJob is queryAsyncJobResult's answer for jobID.
func QueryJob(t *testing.T, s *Sim, jobID string) map[string]any {
	t.Helper()
	return s.Call(map[string]string{"command": "queryAsyncJobResult", "jobid": jobID}).Inner(t, "queryasyncjobresultresponse")
}

// WaitJob polls until the job leaves jobstatus 0.
func WaitJob(t *testing.T, s *Sim, jobID string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if j := QueryJob(t, s, jobID); Num(j["jobstatus"]) != 0 {
			return j
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("job %s still pending", jobID)
	return nil
}
