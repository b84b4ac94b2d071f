package payment

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// Payment methods per club (issue 29): a club offers one or more methods
// (its PaymentSettings.Methods, the default first), the member chooses one
// at the commit, the order records it and every attempt of the order is
// made with its provider. A club that offers one method works as before
// methods: no choice, its provider.

// DirectDebitCurrency is the one currency SEPA direct debits are in: the
// scheme collects euro, whatever country the accounts are in.
const DirectDebitCurrency = "EUR"

// MethodTakes reports whether a payment method may be offered for a
// payment in currency: SEPA Direct Debit only for euro; the other methods
// take what their provider takes. It is the one rule behind what the
// members are offered (PaymentMethods, the pay link), what the commit
// accepts (CheckPaymentMethod), what a club may offer at all
// (DirectDebitCurrencyProblem, for the settings) and the provider's own
// refusal (engine/directdebit).
func MethodTakes(method, currency string) bool {
	return method != DirectDebitProvider || strings.EqualFold(currency, DirectDebitCurrency)
}

// methodsTaking are those of methods that take currency, in their order.
func methodsTaking(methods []string, currency string) []string {
	return slices.DeleteFunc(slices.Clone(methods), func(m string) bool { return !MethodTakes(m, currency) })
}

// DirectDebitCurrencyProblem says, for the settings, why an organisation
// cannot offer direct debit: its season (its periods not closed) has no
// period in euro, so no member could ever pay that way. "" when it may:
// a period in euro, or no period yet (a period in another currency added
// later simply does not offer it: MethodTakes).
func DirectDebitCurrencyProblem(ctx context.Context, db bun.IDB, orgID int64) (string, error) {
	var currencies []string
	if err := db.NewSelect().Model((*engine.MembershipPeriod)(nil)).ColumnExpr("DISTINCT currency").
		Where("organisation_id = ? AND status <> ?", orgID, engine.PeriodClosed).OrderExpr("currency").Scan(ctx, &currencies); err != nil {
		return "", fmt.Errorf("load the periods' currencies: %w", err)
	}
	if len(currencies) == 0 || slices.ContainsFunc(currencies, func(c string) bool { return MethodTakes(DirectDebitProvider, c) }) {
		return "", nil
	}
	return fmt.Sprintf("direct_debit collects in %s only, and this club's periods are in %s: SEPA direct debits cannot collect them",
		DirectDebitCurrency, strings.Join(currencies, ", ")), nil
}

// WithPaymentMethodProviders sets how the provider of one of an
// organisation's methods is found (engine/payproviders builds one per
// method); nil or a nil answer falls back to the organisation's provider.
func WithPaymentMethodProviders(pick func(organisationID int64, method string) engine.PaymentProvider) engine.ServiceOption {
	return func(s *engine.Service) { s.PickMethod = pick }
}

// ProviderForMethod is the organisation's provider of a method; the
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

// methodsIn are the methods an organisation's members choose from for a
// payment in currency, its default first (MethodTakes).
func (s *Service) methodsIn(ctx context.Context, db bun.IDB, orgID int64, currency string) ([]string, error) {
	methods, err := s.paymentMethodsOf(ctx, db, orgID)
	if err != nil {
		return nil, err
	}
	return methodsTaking(methods, currency), nil
}

// PaymentMethods returns the payment methods an organisation's members
// choose from when they register for a period, its default first: the
// club's methods that take the period's currency (direct debit only for
// a period in euro). One method: nothing to choose.
func (s *Service) PaymentMethods(ctx context.Context, orgID, periodID int64) (_ []string, err error) {
	if !engine.InScope(ctx, orgID) {
		return nil, engine.Errorf(engine.CodeNotFound, "organisation not found")
	}
	period, err := store.LoadPeriod(ctx, s.DB(), periodID)
	if err != nil {
		return nil, err
	}
	if period.OrganisationID != orgID {
		return nil, engine.Errorf(engine.CodeNotFound, "membership period not found")
	}
	return s.methodsIn(ctx, s.DB(), orgID, period.Currency)
}

// CheckPaymentMethod checks a member's choice for a payment in currency
// against the organisation's methods and returns what the order records:
// "" for the default (so that a club with one method stores what it
// always did), else the method; direct debit always by name, as the
// default too.
func (s *Service) CheckPaymentMethod(ctx context.Context, db bun.IDB, orgID int64, currency, method string) (string, error) {
	offered, err := s.paymentMethodsOf(ctx, db, orgID)
	if err != nil {
		return "", err
	}
	methods := methodsTaking(offered, currency)
	if method == "" {
		if len(methods) > 0 && methods[0] == DirectDebitProvider {
			// Direct debit as the default (or only) method is stored by
			// name: the mandate, the collection runs and the reminders
			// find an order to collect by it, whatever the default is
			// when they run.
			return DirectDebitProvider, nil
		}
		return "", nil
	}
	if !slices.Contains(methods, method) {
		// A request naming a method the club does not offer is malformed
		// (the choices come from the form): 400 with its field.
		msg := "This payment method is not offered; choose one of the club's."
		if slices.Contains(offered, method) {
			msg = fmt.Sprintf("This payment method does not take payments in %s; choose another of the club's.", currency)
		}
		return "", &engine.Error{Code: engine.CodeInvalid, Message: msg,
			Fields: []engine.FieldError{{Field: "paymentMethod", Message: fmt.Sprintf("must be one of %v", methods)}}}
	}
	if method == methods[0] && method != DirectDebitProvider {
		return "", nil
	}
	return method, nil
}

// orderProvider is the provider of the method an order is paid with: its
// member's choice, else the organisation's default, which also pays an
// order whose method cannot take its currency (direct debit chosen for a
// period in another currency before MethodTakes was checked): a pay link
// that always fails would be a dead end.
func (s *Service) orderProvider(order *engine.Order) engine.PaymentProvider {
	if !MethodTakes(order.PaymentMethod, order.Currency) {
		return s.ProviderForMethod(order.OrganisationID, "")
	}
	return s.ProviderForMethod(order.OrganisationID, order.PaymentMethod)
}

// PayLinkChoice is what the stable pay link of an unpaid order offers:
// the organisation's methods that take the order's currency and the one
// the order is paid with now.
type PayLinkChoice struct {
	Order   *engine.Order
	Methods []string
	// Current is the order's method (the default when it chose none, or
	// one that does not take its currency).
	Current string
}

// PayLinkMethods answers the pay link of an unpaid order before the
// checkout: the methods to choose from again. Errors as FollowPayLink.
func (s *Service) PayLinkMethods(ctx context.Context, orderReference string) (_ *PayLinkChoice, err error) {
	order, err := s.UnpaidOrderByReference(ctx, orderReference)
	if err != nil {
		return nil, err
	}
	methods, err := s.methodsIn(ctx, s.DB(), order.OrganisationID, order.Currency)
	if err != nil {
		return nil, err
	}
	c := &PayLinkChoice{Order: order, Methods: methods, Current: order.PaymentMethod}
	if (c.Current == "" || !slices.Contains(methods, c.Current)) && len(methods) > 0 {
		c.Current = methods[0]
	}
	return c, nil
}

// ChoosePaymentMethod changes the method an unpaid order is paid with
// (the member's choice on its pay link) and returns its attempt, as
// FollowPayLink does: an open attempt of another method is closed first,
// so that only one can be paid.
func (s *Service) ChoosePaymentMethod(ctx context.Context, orderReference, method string) (_ *engine.Payment, err error) {
	order, err := s.UnpaidOrderByReference(ctx, orderReference)
	if err != nil {
		return nil, err
	}
	stored, err := s.CheckPaymentMethod(ctx, s.DB(), order.OrganisationID, order.Currency, method)
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
