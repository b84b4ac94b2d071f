package memberview

import (
	"context"
)

// SelectPersonsHeading is the heading and title of the person-selection
// page, which the handler puts into the StepModel like a question's text.
func SelectPersonsHeading(ctx context.Context) string { return tr(ctx, "step_select_heading") }
