// Package marks is the CPI's own vocabulary for what it creates in
// CloudStack: the tag keys and values, the marks written into a VM's
// display name, a template's or ISO's display text and a load-balancer
// rule's description, the names create_disk and snapshot_disk give, the
// pid@host token naming the process that creates, how long a mark stays
// valid, and the rules that tell what an interrupted call left from what a
// running one is making. cpi/ writes the marks and sweeps by them,
// orphans/ reports and removes by them; cloudstack/ only sends and reads
// them with its calls. It makes no CloudStack call and compares no
// CloudStack string: its rules take plain values.
package marks
