package infrastructure

import (
	"net"
	"os"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// managementServerCommands are the commands of mgmtservers.go (registerCommands).
func managementServerCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listManagementServersMetrics", IDKind: model.KindMgmtServer, Sync: listManagementServersMetrics},
	}
}

// managementServer is the simulator as the one row of mshost.
type managementServer struct{ id, name string }

// listManagementServersMetrics is ListMgmtsMetricsCmd.execute (root admin
// only: authorized = {RoleType.Admin}): QueryManagerImpl.listManagementServers
// (listManagementServersInternal: id EQ, name EQ, keyword LIKE on the
// version; ManagementServerQueryServiceImpl on main) and
// MetricsServiceImpl.listManagementServerMetrics over its responses, under
// "managementserver" (the object name BeanUtils.copyProperties keeps).
// Departures: the management server status (metrics) is never collected,
// so the metric fields are left out as the Java leaves them out before
// StatsCollector's ManagementServerCollector first ran ("No status object
// found"); no peers (peers=true lists none); the JVM, OS and boot details
// are unknown and left out.
func listManagementServersMetrics(c *kernel.Call) (any, error) {
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "localhost"
	}
	l := kernel.Lister[managementServer]{Key: "managementserver", ID: func(m managementServer) string { return m.id },
		Name:    func(m managementServer) string { return m.name },
		Keyword: func(managementServer) []string { return []string{views.CloudStackVersion(c)} }, View: managementServerView}
	return l.Run(c, []managementServer{{id: c.State.ManagementServerID, name: name}})
}

// managementServerView is createManagementServerResponse: the server's name,
// state and version, its last start, the hosts it manages (agents: every
// host, all Up in the simulator) and last managed (lastagents), its pending
// jobs (countPendingNonPseudoJobs) and its service IP, here the address the
// caller reached it on.
func managementServerView(c *kernel.Call, m managementServer) map[string]any {
	agents := []string{}
	for _, h := range c.State.Hosts {
		agents = append(agents, h.Name)
	}
	pending := 0
	for _, j := range c.State.Jobs {
		if j.Status == kernel.JobPending {
			pending++
		}
	}
	ip := c.Host
	if host, _, err := net.SplitHostPort(c.Host); err == nil {
		ip = host
	}
	ip = strings.Trim(ip, "[]")
	return map[string]any{"id": m.id, "name": m.name, "state": "Up", "version": views.CloudStackVersion(c),
		"lastserverstart": kernel.CsTime(c.Engine.Started), "agents": agents, "lastagents": agents,
		"agentscount": len(agents), "pendingjobscount": pending, "serviceip": ip, "ipaddress": ip}
}
