package simulator

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// Job statuses as queryAsyncJobResult reports them.
const (
	jobPending   = 0
	jobSucceeded = 1
	jobFailed    = 2
)

// asyncJob is what an async command hands the job engine once its input has
// been checked.
type asyncJob struct {
	instanceType string // jobinstancetype, e.g. "VirtualMachine", "Host"
	instanceID   string // jobinstanceid: the entity the job works on
	created      bool   // a create command: the first answer also carries "id" = instanceID
	cmdClass     string // Java class for "cmd", e.g. "org.apache.cloudstack.api.command.admin.vm.DeployVMCmdByAdmin"

	// run completes the job with the state lock held. It returns the job
	// result, e.g. map[string]any{"virtualmachine": view}, or an error
	// (an *APIError keeps its codes; other errors become 530).
	run func() (any, error)
	// fail, if set, is called with the state lock held when the job fails,
	// whether run failed or a fault failed it, so the family can roll back.
	fail func(*APIError)
	// await, if set, holds the job until it is closed: work the job waits
	// for runs outside the state lock (a template copy). The job then
	// completes at once; JobLatency does not apply.
	await <-chan struct{}
}

// failing makes the job fail with err: for a check CloudStack makes inside
// the job, so that its failure fails the job, not the request.
func (j *asyncJob) failing(err error) *asyncJob {
	j.run = func() (any, error) { return nil, err }
	return j
}

// submit records a job for an async command and schedules its completion
// after the configured latency; the first answer is ApiServer's
// getBaseAsyncResponse ({jobid}) or, for a create command,
// getBaseAsyncCreateResponse ({jobid, id}). The caller holds the state lock.
func (s *engine) submit(c *Call, spec *asyncJob, fault *Fault) (map[string]any, *model.Job) {
	id, internal := c.st.NewID(model.KindJob)
	job := &model.Job{ID: id, InternalID: internal, Command: c.Command, Cmd: spec.cmdClass,
		AccountID: c.Account.ID, UserID: c.User.ID, InstanceType: spec.instanceType,
		InstanceID: spec.instanceID, Status: jobPending, Created: s.now()}
	if job.Cmd == "" { // departure: a made-up class where the family names none
		job.Cmd = "org.apache.cloudstack.api.command." + c.Command
	}
	c.st.Jobs = append(c.st.Jobs, job)
	c.changed()
	body := map[string]any{"jobid": job.ID}
	if spec.created {
		body["id"] = spec.instanceID
	}
	switch {
	case fault != nil && fault.Pending, s.closed:
		// never completes: the caller sees jobstatus 0 forever
	case spec.await != nil:
		s.xfer.Start("", func(ctx context.Context) {
			select {
			case <-spec.await:
				s.finishLater(job, spec, fault)
			case <-ctx.Done():
			}
		})
	case s.jobLatency <= 0:
		s.finish(job, spec, fault)
	default:
		s.timers[job.ID] = time.AfterFunc(s.jobLatency, func() { s.finishLater(job, spec, fault) })
	}
	return body, job
}

// finishLater runs on the timer goroutine.
func (s *engine) finishLater(job *model.Job, spec *asyncJob, fault *Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.timers, job.ID)
	if s.closed {
		return // the state was saved with the job pending; a restart fails it
	}
	s.finish(job, spec, fault)
	s.persist()
}

// finish completes a job: a job-stage fault fails it, otherwise the family's
// run decides. A failure is ApiAsyncJobDispatcher.runJob's: jobresultcode is
// the error's HTTP code, jobresult an ExceptionResponse, which
// ResponseObjectTypeAdapter writes as just errorcode and errortext.
func (s *engine) finish(job *model.Job, spec *asyncJob, fault *Fault) {
	var result any
	var err error
	if fault != nil && fault.failsJob(true) {
		err = fault.apiError()
	} else {
		result, err = spec.run()
	}
	if err != nil {
		apiErr := asAPIError(err)
		if spec.fail != nil {
			spec.fail(apiErr)
		}
		s.completeJob(job, jobFailed, apiErr.Code, map[string]any{"errorcode": apiErr.Code, "errortext": apiErr.Text})
		return
	}
	s.completeJob(job, jobSucceeded, 0, result)
}

func (s *engine) completeJob(job *model.Job, status, code int, result any) {
	b, err := json.Marshal(result)
	if err != nil {
		status, code = jobFailed, codeInternalError
		b, _ = json.Marshal(map[string]any{"errorcode": code, "errortext": "job result encoding failed"})
	}
	now := s.now()
	job.Status, job.ResultCode, job.Result, job.Completed = status, code, b, &now
	s.dirty = true
}

// failInterruptedJobs fails jobs a previous run left pending, as
// AsyncJobManagerImpl.cleanupLeftOverJobs does. Its result is a plain
// string, "job cancelled because of management server restart or shutdown",
// which ApiSerializerHelper.fromSerializedString cannot read back (no class
// prefix): queryAsyncJobResult then shows no jobresult at all.
func failInterruptedJobs(st *model.State, now time.Time) {
	for _, j := range st.Jobs {
		if j.Status == jobPending {
			j.Status, j.ResultCode, j.Result = jobFailed, codeInternalError, nil
			t := now
			j.Completed = &t
		}
	}
}

func init() {
	paramKinds["managementserverid"] = model.KindMgmtServer // ManagementServerResponse UUIDs
	register(
		command{name: "queryAsyncJobResult", sync: queryAsyncJobResult},
		command{name: "listAsyncJobs", idKind: model.KindJob, sync: listAsyncJobs},
	)
}

// queryAsyncJobResult is QueryAsyncJobResultCmd.execute: the job's row as
// ApiResponseHelper.queryJobResult renders it.
func queryAsyncJobResult(c *Call) (any, error) {
	job, _ := model.ByID(c.st.Jobs, c.Params.Get("jobid"))
	return c.jobView(job), nil
}

// listAsyncJobs is ListAsyncJobsCmd and QueryManagerImpl.
// searchForAsyncJobsInternal: the jobs buildACLSearchParameters lets the
// caller see (jobPermitted), keyword a substring of cmd, startdate keeping
// jobs created on or after that day, managementserverid the jobs executing
// on that server (executing_msid, which AsyncJobManagerImpl.completeAsyncJob
// clears); in id order. ListAsyncJobsCmd is not among the commands
// ParamProcessWorker gives the "yyyy-MM-dd HH:mm:ss" format, so startdate
// is read as "yyyy-MM-dd" and its time of day ignored.
func listAsyncJobs(c *Call) (any, error) {
	p := c.Params
	var since time.Time
	if d := p.Get("startdate"); d != "" {
		since, _ = time.Parse("2006-01-02", d[:10]) // validate checked the date
	}
	l := lister[*model.Job]{key: "asyncjobs", id: (*model.Job).UUID, view: (*Call).jobView,
		keyword: func(j *model.Job) []string { return []string{j.Cmd} }}
	msid := p.Get("managementserverid") // the jobs executing there: pending ones
	return l.run(c, c.st.Jobs, func(j *model.Job) bool {
		return c.jobPermitted(j) && !j.Created.Before(since) &&
			(msid == "" || j.Status == jobPending && strings.EqualFold(msid, c.st.ManagementServerID))
	})
}

// jobPermitted is AccountManagerImpl.buildACLSearchParameters as
// searchForAsyncJobsInternal uses it: a caller that is not an admin sees its
// own account's jobs; an admin sees its own too unless it names an account
// (in domainid or its own domain), a domainid (that domain, or below it
// with isrecursive) or asks for listall (its domain and below).
func (c *Call) jobPermitted(j *model.Job) bool {
	p := c.Params
	owner := c.st.Account(j.AccountID)
	if owner == nil {
		return false
	}
	admin := c.Account.IsAdmin()
	domainID := model.FirstNonEmpty(p.Get("domainid"), c.Account.DomainID)
	switch {
	case !admin:
		return owner.ID == c.Account.ID
	case p.Get("account") != "":
		return strings.EqualFold(owner.Name, p.Get("account")) && strings.EqualFold(owner.DomainID, domainID)
	case p.Get("domainid") != "" && !p.Bool("isrecursive", false) && !p.Bool("listall", false):
		return strings.EqualFold(owner.DomainID, domainID)
	case p.Get("domainid") != "" || p.Bool("listall", false):
		return domainWithin(c.st, owner.DomainID, domainID)
	}
	return owner.ID == c.Account.ID
}

// domainWithin says domain id is base or below it (DomainVO path prefix).
func domainWithin(st *model.State, id, base string) bool {
	d, b := st.Domain(id), st.Domain(base)
	return d != nil && b != nil && strings.HasPrefix(d.Path, b.Path)
}

// jobView is AsyncJobJoinDaoImpl.newAsyncJobResponse, for listAsyncJobs and
// queryAsyncJobResult alike: "completed" is AsyncJobResponse's removed field,
// set when the job completes. A pending job has no result fields yet;
// jobresulttype is "object" whenever a result object is read back (the
// simulator never stores text results).
func (c *Call) jobView(j *model.Job) map[string]any {
	v := map[string]any{"jobid": j.ID, "accountid": j.AccountID, "userid": j.UserID, "cmd": j.Cmd,
		"jobstatus": j.Status, "jobprocstatus": 0, "jobresultcode": j.ResultCode, "created": csTime(j.Created)}
	if j.Status == jobPending {
		// The executing server, set while the job runs: completeAsyncJob
		// clears executing_msid, and the response shows it only when set.
		v["managementserverid"] = c.st.ManagementServerID
	}
	if a := c.st.Account(j.AccountID); a != nil {
		v["account"] = a.Name
		if d := c.st.Domain(a.DomainID); d != nil {
			v["domainid"], v["domainpath"] = d.ID, d.DisplayPath()
		}
	}
	if j.InstanceType != "" {
		v["jobinstancetype"], v["jobinstanceid"] = j.InstanceType, j.InstanceID
	}
	if j.Status != jobPending {
		v["completed"] = csTime(*j.Completed)
	}
	if len(j.Result) > 0 {
		v["jobresulttype"], v["jobresult"] = "object", j.Result
	}
	return v
}
