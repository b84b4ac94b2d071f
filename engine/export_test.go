package engine

// DemoDefinitionYAML is the demo definition's source, for tests that import
// a changed version of it.
func DemoDefinitionYAML() []byte { return demoDefinition }
