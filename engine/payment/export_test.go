package payment

// SettleSlowly makes SettleBatch settle each confirmation on its own
// (settleSlowly), as the settlement did before it was batched.
func SettleSlowly(slowly bool) func() {
	before := settleSlowly
	settleSlowly = slowly
	return func() { settleSlowly = before }
}
