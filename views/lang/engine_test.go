package lang

import (
	"portal/engine"
)

var engineLanguages = engine.Languages
