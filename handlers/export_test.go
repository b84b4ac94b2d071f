package handlers

// Exported for the tests of package handlers_test.
var WithServerPrefix = withServerPrefix

// LoopbackPeer exposes the test gateway's client check.
var LoopbackPeer = loopbackPeer
