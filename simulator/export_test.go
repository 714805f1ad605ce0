package simulator

// The unexported parts the external tests of this directory read: what
// the seeded zone holds, the command table, and the expunge task's step.
var (
	SeededHosts      = seededHosts
	RegisterCommands = registerCommands
	ExpungeDelay     = expungeDelay
)

// ExpungeDestroyed runs one pass of the expunge task with the configured
// delay, without waiting for its interval.
func ExpungeDestroyed(s *Server) { s.expungeDestroyed(expungeDelay(s.State)) }
