package kernel

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// Job statuses as queryAsyncJobResult reports them.
const (
	JobPending   = 0
	jobSucceeded = 1
	jobFailed    = 2
)

// AsyncJob is what an async command hands the job engine once its input has
// been checked.
type AsyncJob struct {
	InstanceType string // jobinstancetype, e.g. "VirtualMachine", "Host"
	InstanceID   string // jobinstanceid: the entity the job works on
	Created      bool   // a create command: the first answer also carries "id" = instanceID
	CmdClass     string // Java class for "cmd", e.g. "org.apache.cloudstack.api.command.admin.vm.DeployVMCmdByAdmin"

	// Run completes the job with the state lock held. It returns the job
	// result, e.g. map[string]any{"virtualmachine": view}, or an error
	// (an *APIError keeps its codes; other errors become 530).
	Run func() (any, error)
	// Fail, if set, is called with the state lock held when the job fails,
	// whether run failed or a fault failed it, so the family can roll back.
	Fail func(*APIError)
	// Await, if set, holds the job until it is closed: work the job waits
	// for runs outside the state lock (a template copy). The job then
	// completes at once; JobLatency does not apply.
	Await <-chan struct{}
}

// Failing makes the job fail with err: for a check CloudStack makes inside
// the job, so that its failure fails the job, not the request.
func (j *AsyncJob) Failing(err error) *AsyncJob {
	j.Run = func() (any, error) { return nil, err }
	return j
}

// jobLatency is how long a job of the command takes: its own latency when
// JobLatencyFor names it, else JobLatency. Simulator plumbing: CloudStack's
// jobs take as long as their work.
func (s *Engine) jobLatency(command string) time.Duration {
	if d, ok := s.JobLatencyFor[command]; ok {
		return d
	}
	return s.JobLatency
}

// submit records a job for an async command and schedules its completion
// after the configured latency; the first answer is ApiServer's
// getBaseAsyncResponse ({jobid}) or, for a create command,
// getBaseAsyncCreateResponse ({jobid, id}). The caller holds the state lock.
func (s *Engine) submit(c *Call, spec *AsyncJob, fault *Fault) (map[string]any, *model.Job) {
	id, internal := c.State.NewID(model.KindJob)
	job := &model.Job{ID: id, InternalID: internal, Command: c.Command, Cmd: spec.CmdClass,
		AccountID: c.Account.ID, UserID: c.User.ID, InstanceType: spec.InstanceType,
		InstanceID: spec.InstanceID, Status: JobPending, Created: s.Now()}
	if job.Cmd == "" { // departure: a made-up class where the family names none
		job.Cmd = "org.apache.cloudstack.api.command." + c.Command
	}
	c.State.Jobs = append(c.State.Jobs, job)
	c.Changed()
	body := map[string]any{"jobid": job.ID}
	if spec.Created {
		body["id"] = spec.InstanceID
	}
	switch {
	case fault != nil && fault.Pending, s.Closed:
		// never completes: the caller sees jobstatus 0 forever
	case spec.Await != nil:
		s.Xfer.Start("", func(ctx context.Context) {
			select {
			case <-spec.Await:
				s.finishLater(job, spec, fault)
			case <-ctx.Done():
			}
		})
	case s.jobLatency(c.Command) <= 0:
		s.finish(job, spec, fault)
	default:
		s.Timers[job.ID] = time.AfterFunc(s.jobLatency(c.Command), func() { s.finishLater(job, spec, fault) })
	}
	return body, job
}

// finishLater runs on the timer goroutine.
func (s *Engine) finishLater(job *model.Job, spec *AsyncJob, fault *Fault) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	delete(s.Timers, job.ID)
	if s.Closed {
		return // the state was saved with the job pending; a restart fails it
	}
	s.finish(job, spec, fault)
	s.Persist()
}

// finish completes a job: a job-stage fault fails it, otherwise the family's
// run decides. A failure is ApiAsyncJobDispatcher.runJob's: jobresultcode is
// the error's HTTP code, jobresult an ExceptionResponse, which
// ResponseObjectTypeAdapter writes as just errorcode and errortext.
func (s *Engine) finish(job *model.Job, spec *AsyncJob, fault *Fault) {
	var result any
	var err error
	if fault != nil && fault.failsJob(true) {
		err = fault.apiError()
	} else {
		result, err = spec.Run()
	}
	if err != nil {
		apiErr := AsAPIError(err)
		if spec.Fail != nil {
			spec.Fail(apiErr)
		}
		s.completeJob(job, jobFailed, apiErr.Code, map[string]any{"errorcode": apiErr.Code, "errortext": apiErr.Text})
		return
	}
	s.completeJob(job, jobSucceeded, 0, result)
}

func (s *Engine) completeJob(job *model.Job, status, code int, result any) {
	b, err := json.Marshal(result)
	if err != nil {
		status, code = jobFailed, CodeInternalError
		b, _ = json.Marshal(map[string]any{"errorcode": code, "errortext": "job result encoding failed"})
	}
	now := s.Now()
	job.Status, job.ResultCode, job.Result, job.Completed = status, code, b, &now
	s.Dirty = true
}

// FailInterruptedJobs fails jobs a previous run left pending, as
// AsyncJobManagerImpl.start's cleanupLeftOverJobs does for the jobs of the
// management server that went away: it cleans up each job's instance
// (cleanupResources), then sets status FAILED, result code
// ApiErrorCode.INTERNAL_ERROR's 530 and the removed (completed) time. Its
// result is a plain string, "job cancelled because of management server
// restart or shutdown", which ApiSerializerHelper.fromSerializedString
// cannot read back (no class prefix): queryAsyncJobResult then shows no
// jobresult at all.
func FailInterruptedJobs(st *model.State, now time.Time) {
	for _, j := range st.Jobs {
		if j.Status == JobPending {
			cleanupResources(st, j)
			j.Status, j.ResultCode, j.Result = jobFailed, CodeInternalError, nil
			t := now
			j.Completed = &t
		}
	}
}

// cleanupResources is AsyncJobManagerImpl.cleanupResources for the
// instance types whose rows the simulator leaves transitional while a job
// runs: a VM (cleanupVirtualMachine: one not found, removed rows included
// as VMInstanceDao.findById skips them, or not in a transitional state is
// skipped) takes OperationFailed. The simulator's jobs never leave a volume
// in a transitional Volume.State (cleanupVolume) nor a network Implementing
// (cleanupNetwork), so those have nothing to clean.
func cleanupResources(st *model.State, j *model.Job) {
	if j.InstanceType != "VirtualMachine" { // ApiCommandResourceType.VirtualMachine
		return
	}
	if vm, ok := model.ByID(st.VMs, j.InstanceID); ok && vm.Removed == nil {
		vm.OperationFailed()
	}
}

// JobCommands are the async job commands (api/command/user/job), which the
// kernel answers itself.
func JobCommands() []Command {
	return []Command{
		{Name: "queryAsyncJobResult", Sync: queryAsyncJobResult},
		{Name: "listAsyncJobs", IDKind: model.KindJob, Sync: listAsyncJobs},
	}
}

// queryAsyncJobResult is QueryAsyncJobResultCmd.execute: the job's row as
// ApiResponseHelper.queryJobResult renders it.
func queryAsyncJobResult(c *Call) (any, error) {
	job, _ := model.ByID(c.State.Jobs, c.Params.Get("jobid"))
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
	l := Lister[*model.Job]{Key: "asyncjobs", ID: (*model.Job).UUID, View: (*Call).jobView,
		Keyword: func(j *model.Job) []string { return []string{j.Cmd} }}
	msid := p.Get("managementserverid") // the jobs executing there: pending ones
	return l.Run(c, c.State.Jobs, func(j *model.Job) bool {
		return c.jobPermitted(j) && !j.Created.Before(since) &&
			(msid == "" || j.Status == JobPending && strings.EqualFold(msid, c.State.ManagementServerID))
	})
}

// jobPermitted is AccountManagerImpl.buildACLSearchParameters as
// searchForAsyncJobsInternal uses it: a caller that is not an admin sees its
// own account's jobs; an admin sees its own too unless it names an account
// (in domainid or its own domain), a domainid (that domain, or below it
// with isrecursive) or asks for listall (its domain and below).
func (c *Call) jobPermitted(j *model.Job) bool { return c.ListPermits(j.AccountID) }

// ListPermits is AccountManagerImpl.buildACLSearchParameters for a list
// command that takes account, domainid, isrecursive and listall (as
// searchForAsyncJobsInternal and SshKeyPairServiceImpl.listSshKeyPairs
// call it): whether the caller sees a row owned by accountID.
func (c *Call) ListPermits(accountID string) bool {
	p := c.Params
	owner := c.State.Account(accountID)
	switch {
	case owner == nil:
		return false
	case owner.Type == model.AccountTypeProject:
		// With projectid buildACLSearchParameters puts the project's account
		// in the caller's place, so a project's row is the project scope's
		// to judge (ProjectScope, the Lister's Owner hook), not this rule.
		return true
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
		return domainWithin(c.State, owner.DomainID, domainID)
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
		"jobstatus": j.Status, "jobprocstatus": 0, "jobresultcode": j.ResultCode, "created": CsTime(j.Created)}
	if j.Status == JobPending {
		// The executing server, set while the job runs: completeAsyncJob
		// clears executing_msid, and the response shows it only when set.
		v["managementserverid"] = c.State.ManagementServerID
	}
	if a := c.State.Account(j.AccountID); a != nil {
		v["account"] = a.Name
		if d := c.State.Domain(a.DomainID); d != nil {
			v["domainid"], v["domainpath"] = d.ID, d.DisplayPath()
		}
	}
	if j.InstanceType != "" {
		v["jobinstancetype"], v["jobinstanceid"] = j.InstanceType, j.InstanceID
	}
	if j.Status != JobPending {
		v["completed"] = CsTime(*j.Completed)
	}
	if len(j.Result) > 0 {
		v["jobresulttype"], v["jobresult"] = "object", j.Result
	}
	return v
}
