package payment

import "context"

// SettleSlowly makes SettleBatch settle each confirmation on its own
// (settleSlowlyKey), as the settlement did before it was batched.
func SettleSlowly(ctx context.Context) context.Context {
	return context.WithValue(ctx, settleSlowlyKey{}, true)
}
