package cloudstack

import (
	"errors"
	"fmt"
	"maps"
)

// Tags beside the job they mark. deployVirtualMachine, createVolume and
// createSnapshot are BaseAsyncCreateCmds: ApiServer.processAsyncCmd runs
// their create() (the VM, volume or snapshot row is persisted) before it
// queues the job, and getBaseAsyncCreateResponse answers the entity's id
// with the job id at once. createTags needs nothing of the resource but its
// row (TaggedResourceManagerImpl.createTags looks it up with
// ResourceManagerUtilImpl.getResourceId, entityMgr.findByUuid), so it is
// sent as soon as the id is known and its job runs beside the create's: a
// create costs one job's wait, not two.

// MarkError is a failure to tag what a create command had already made:
// the resource exists (its create phase ran), so CloudStack acted even when
// it refused the createTags request itself. The caller removes the
// resource.
type MarkError struct {
	ResourceType, ID string
	Err              error
}

func (e *MarkError) Error() string {
	return fmt.Sprintf("tagging %s %s, which CloudStack had just created: %v", e.ResourceType, e.ID, e.Err)
}

func (e *MarkError) Unwrap() error { return e.Err }

// isMarkError says err is a MarkError: the resource exists.
func isMarkError(err error) bool {
	var mark *MarkError
	return errors.As(err, &mark)
}

// tagBeside sends createTags for a resource a create command has just made
// and returns its job without waiting for it; no tags to send is no job.
func (c *Client) tagBeside(resourceType, id string, tags map[string]string) (string, error) {
	fresh := sendableTags(tags)
	if len(fresh) == 0 {
		return "", nil
	}
	r, err := c.cs.Resourcetags.CreateTags(c.cs.Resourcetags.NewCreateTagsParams([]string{id}, resourceType, fresh))
	if err != nil {
		return "", &MarkError{ResourceType: resourceType, ID: id, Err: c.fail("createTags", err)}
	}
	return r.JobID, nil
}

// awaitTags waits, once the create's job has ended, for the tag job sent
// beside it (sendErr is its request's failure) and returns the tags the
// resource now has, beyond had.
func (c *Client) awaitTags(resourceType, id, jobID string, sendErr error, had, tags map[string]string) (map[string]string, error) {
	if sendErr != nil {
		return nil, sendErr
	}
	if jobID != "" {
		if _, err := c.waitJobBeside("createTags", jobID); err != nil {
			return nil, &MarkError{ResourceType: resourceType, ID: id, Err: err}
		}
	}
	out := maps.Clone(had)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, sendableTags(tags))
	return out, nil
}
