package mailview

import (
	"context"

	"portal/views/lang"
)

// tr is a page text in the language of ctx.
func tr(ctx context.Context, id string, data ...map[string]any) string {
	return lang.T(ctx, id, data...)
}
