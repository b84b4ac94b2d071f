package engine

// The demo of make run and of the tests: the ids its link and its checks
// name (engine/demodata seeds it).

// DemoUserKey is the user key of the demo link.
const DemoUserKey = "demo"

// DemoPeriodID is the membership period of the demo link.
const DemoPeriodID = 1
