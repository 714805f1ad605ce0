package cloudstack

import (
	"fmt"
	"sync"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// project is cloudstack.project resolved to its id once per CPI call:
// CloudStack hides a project's resources from every query without its
// projectid, and creates what a command with projectid makes in the
// project, so every command that takes projectid carries it.
type project struct {
	ref  string // as configured: a name or an id; "" for none
	once sync.Once
	id   string
	err  error
}

// projectID is the configured project's id, "" when none is configured.
func (c *Client) projectID() (string, error) {
	if c.project.ref == "" {
		return "", nil
	}
	c.project.once.Do(func() { c.project.id, c.project.err = c.resolveProject(c.project.ref) })
	return c.project.id, c.project.err
}

// resolveProject finds the project ref names exactly, by id or by name;
// namesakes are refused. listall lets an admin name a project it is not a
// member of; a user sees its own projects either way.
func (c *Client) resolveProject(ref string) (string, error) {
	p := c.cs.Project.NewListProjectsParams()
	p.SetListall(true)
	if IsID(ref) {
		p.SetId(ref)
	} else {
		p.SetName(ref)
	}
	var projects []*csgo.Project
	resp, err := c.cs.Project.ListProjects(p)
	switch err = c.fail("listProjects", err); {
	case IsNoSuchEntity(err): // an id no project has
	case err != nil:
		return "", fmt.Errorf("cloudstack.project %q: %w", ref, err)
	default:
		projects = resp.Projects
	}
	found, err := exactlyOne(projects, ref, func(p *csgo.Project) (string, string) { return p.Id, p.Name }, "projects")
	if err != nil {
		return "", fmt.Errorf("cloudstack.project %q: %w", ref, err)
	}
	if found == nil {
		return "", fmt.Errorf("cloudstack.project %q: no CloudStack project has that name or id, or the account is not a member of it", ref)
	}
	return (*found).Id, nil
}

// inProject puts a command with projectid into the configured project.
func (c *Client) inProject(p interface{ SetProjectid(string) }) error {
	id, err := c.projectID()
	if err == nil && id != "" {
		p.SetProjectid(id)
	}
	return err
}

// customInProject is inProject for the commands sent through CustomRequest.
func (c *Client) customInProject(p *csgo.CustomServiceParams) error {
	id, err := c.projectID()
	if err == nil && id != "" {
		p.SetParam("projectid", id)
	}
	return err
}
