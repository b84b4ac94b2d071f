package handlers

// Exported for the tests of package handlers_test.
var WithServerPrefix = withServerPrefix
