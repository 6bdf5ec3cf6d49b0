package run

import "github.com/orkspace/ork/internal/run/keyledger"

// Trigger says why a key is reconciled; it is sent as prepared.trigger. It is the ledger's
// (run/keyledger), named here too because it is part of run's API.
type Trigger = keyledger.Trigger

// Triggers, from the strongest: a pending delete is never downgraded by a later resync.
const (
	TriggerDelete  = keyledger.TriggerDelete
	TriggerCreate  = keyledger.TriggerCreate
	TriggerUpdate  = keyledger.TriggerUpdate
	TriggerChild   = keyledger.TriggerChild
	TriggerRelated = keyledger.TriggerRelated // an object payload.related read in the CR's last pass changed
	TriggerResync  = keyledger.TriggerResync
	TriggerRequeue = keyledger.TriggerRequeue
)
