package payment

import (
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"portal/engine"
)

// Payment methods per club (issue 29): a club offers one or more methods
// (its PaymentSettings.Methods, the default first), the member chooses one
// at the commit, the order records it and every attempt of the order is
// made with its provider. A club that offers one method works as before
// methods: no choice, its provider.

// WithPaymentMethodProviders sets how the provider of one of an
// organisation's methods is found (engine/payproviders builds one per
// method); nil or a nil answer falls back to the organisation's provider.
func WithPaymentMethodProviders(pick func(organisationID int64, method string) engine.PaymentProvider) engine.ServiceOption {
	return func(s *engine.Service) { s.PickMethod = pick }
}

// providerForMethod is the organisation's provider of a method; the
// default one for "" or a method it no longer offers (an attempt of a
// method switched off since still goes to the provider of its name when
// one is known: providerNamed).
func (s *Service) ProviderForMethod(organisationID int64, method string) engine.PaymentProvider {
	if method != "" && s.PickMethod != nil {
		if p := s.PickMethod(organisationID, method); p != nil {
			return p
		}
	}
	return s.providerFor(organisationID)
}

// paymentMethodsOf are the methods an organisation's members choose from,
// its default first: its own settings', else the environment's provider.
func (s *Service) paymentMethodsOf(ctx context.Context, db bun.IDB, orgID int64) ([]string, error) {
	ps, err := LoadPaymentSettings(ctx, db, orgID)
	if err != nil {
		return nil, err
	}
	if list := ps.MethodList(); len(list) > 0 {
		return list, nil
	}
	if s.Payments != nil {
		return []string{s.Payments.Name()}, nil
	}
	return nil, nil
}

// PaymentMethods returns the payment methods an organisation's members
// choose from, its default first. One method: nothing to choose.
func (s *Service) PaymentMethods(ctx context.Context, orgID int64) (_ []string, err error) {
	defer engine.ClassifyUnavailable(&err)
	if !engine.InScope(ctx, orgID) {
		return nil, engine.Errorf(engine.CodeNotFound, "organisation not found")
	}
	return s.paymentMethodsOf(ctx, s.DB(), orgID)
}

// checkPaymentMethod checks a member's choice against the organisation's
// methods and returns what the order records: "" for the default (so that
// a club with one method stores what it always did), else the method.
func (s *Service) CheckPaymentMethod(ctx context.Context, db bun.IDB, orgID int64, method string) (string, error) {
	if method == "" {
		return "", nil
	}
	methods, err := s.paymentMethodsOf(ctx, db, orgID)
	if err != nil {
		return "", err
	}
	if !slices.Contains(methods, method) {
		// A request naming a method the club does not offer is malformed
		// (the choices come from the form): 400 with its field.
		return "", &engine.Error{Code: engine.CodeInvalid, Message: "This payment method is not offered; choose one of the club's.",
			Fields: []engine.FieldError{{Field: "paymentMethod", Message: fmt.Sprintf("must be one of %v", methods)}}}
	}
	if method == methods[0] {
		return "", nil
	}
	return method, nil
}

// orderProvider is the provider of the method an order is paid with: its
// member's choice, else the organisation's default.
func (s *Service) orderProvider(order *engine.Order) engine.PaymentProvider {
	return s.ProviderForMethod(order.OrganisationID, order.PaymentMethod)
}

// PayLinkChoice is what the stable pay link of an unpaid order offers:
// the organisation's methods and the one the order is paid with now.
type PayLinkChoice struct {
	Order   *engine.Order
	Methods []string
	// Current is the order's method (its default when it chose none).
	Current string
}

// PayLinkMethods answers the pay link of an unpaid order before the
// checkout: the methods to choose from again. Errors as FollowPayLink.
func (s *Service) PayLinkMethods(ctx context.Context, orderReference string) (_ *PayLinkChoice, err error) {
	defer engine.ClassifyUnavailable(&err)
	order, err := s.UnpaidOrderByReference(ctx, orderReference)
	if err != nil {
		return nil, err
	}
	methods, err := s.paymentMethodsOf(ctx, s.DB(), order.OrganisationID)
	if err != nil {
		return nil, err
	}
	c := &PayLinkChoice{Order: order, Methods: methods, Current: order.PaymentMethod}
	if c.Current == "" && len(methods) > 0 {
		c.Current = methods[0]
	}
	return c, nil
}

// ChoosePaymentMethod changes the method an unpaid order is paid with
// (the member's choice on its pay link) and returns its attempt, as
// FollowPayLink does: an open attempt of another method is closed first,
// so that only one can be paid.
func (s *Service) ChoosePaymentMethod(ctx context.Context, orderReference, method string) (_ *engine.Payment, err error) {
	defer engine.ClassifyUnavailable(&err)
	order, err := s.UnpaidOrderByReference(ctx, orderReference)
	if err != nil {
		return nil, err
	}
	stored, err := s.CheckPaymentMethod(ctx, s.DB(), order.OrganisationID, method)
	if err != nil {
		return nil, err
	}
	if stored != order.PaymentMethod {
		last, err := lastPayment(ctx, s.DB(), order.ID)
		if err != nil {
			return nil, err
		}
		if last != nil && last.Status == engine.PaymentPending && last.Provider != s.ProviderForMethod(order.OrganisationID, stored).Name() {
			if err := s.ProviderOf(order.OrganisationID, last).Expire(ctx, *last); err != nil {
				s.Log.WarnContext(ctx, "a checkout of the method left could not be closed at the provider", "reference", last.Reference, "err", err)
			}
			if _, err := cancelPayment(ctx, s.DB(), last.ID, s.Clock()); err != nil {
				return nil, err
			}
		}
		if _, err := s.DB().NewUpdate().Model(order).Set("payment_method = ?", stored).WherePK().
			Where("status = ?", engine.OrderUnpaid).Exec(ctx); err != nil {
			return nil, fmt.Errorf("store the payment method: %w", err)
		}
		order.PaymentMethod = stored
	}
	return s.checkoutOrUnavailable(ctx, order)
}

// MethodProvider is the provider of one of an organisation's payment
// methods (its default one for "" or a method it does not offer), for
// the pages that show an attempt of it.
func (s *Service) MethodProvider(organisationID int64, method string) engine.PaymentProvider {
	return s.ProviderForMethod(organisationID, method)
}
