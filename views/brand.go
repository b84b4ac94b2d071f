package views

import (
	"context"
)

// Brand is what every page shows of the organisation it belongs to: its
// name, logo and accent colour, and where to reach it. The HTTP layer puts
// it in the request context once (WithBrand), so that the page frame finds
// it without every view model carrying it.
type Brand struct {
	Name     string
	LogoURL  string // https, or ""
	Accent   string // #rrggbb, or "" for the portal's own colour
	Contact  string // e-mail address, or ""
	Language string // the html lang; "" is "en"
	// Base is the path prefix the organisation is addressed under
	// (/o/{slug}), "" when it has a hostname of its own.
	Base string
}

// WithBase returns b addressed under a path prefix.
func (b Brand) WithBase(base string) Brand { b.Base = base; return b }

type brandKey struct{}

// WithBrand returns ctx carrying the organisation's brand for the pages.
func WithBrand(ctx context.Context, b Brand) context.Context {
	return context.WithValue(ctx, brandKey{}, b)
}

// BrandOf returns the brand in ctx; without one, the portal's own.
func BrandOf(ctx context.Context) Brand {
	if b, ok := ctx.Value(brandKey{}).(Brand); ok {
		return b
	}
	return Brand{}
}

// Title is the name shown in the page header: the organisation's, or the
// portal's own without one.
func (b Brand) Title(ctx context.Context) string {
	if b.Name == "" {
		return tr(ctx, "layout_brand")
	}
	return b.Name
}

// stylesheet is the address of the organisation's accent colour
// stylesheet, "" for none. The colour is in the query so that a changed
// colour is a new address; the Content-Security-Policy allows no inline
// style, so the colour cannot go into the page itself.
func (b Brand) stylesheet() string {
	if b.Accent == "" {
		return ""
	}
	return b.Base + "/brand.css?c=" + b.Accent[1:]
}
