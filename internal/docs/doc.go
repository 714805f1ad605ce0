// Package docs holds the tests that keep the repository's documentation
// usable: README.md stays a short guide whose first screen answers which
// stemcell each hypervisor takes and links to the KVM quickstart, every
// relative link in README.md and docs/ reaches a file (and heading), and
// the account's role list in docs/operators/logs-and-role.md names every
// command the CloudStack layer sends. It has no code of its own.
package docs
