package engine

import (
	"time"

	"github.com/uptrace/bun"
)

// QuestionType is the code of a step's kind of question, as stored and as
// definitions spell it.
type QuestionType string

// Question types of a step.
const (
	TypeText     QuestionType = "TXT"
	TypeNumber   QuestionType = "NUM"
	TypeDropdown QuestionType = "DRP"
	TypeCheckbox QuestionType = "BCB"
	TypeAccept   QuestionType = "ITC"
	TypeOne      QuestionType = "ONE"
	TypeRadio    QuestionType = "RDO"
	TypeMulti    QuestionType = "SEL"
)

// QuestionTypes lists every valid question type code.
var QuestionTypes = []QuestionType{TypeText, TypeNumber, TypeDropdown, TypeCheckbox, TypeAccept, TypeOne, TypeRadio, TypeMulti}

// QuestionTypeCodes is QuestionTypes as plain strings, for messages.
func QuestionTypeCodes() []string {
	out := make([]string, len(QuestionTypes))
	for i, t := range QuestionTypes {
		out[i] = string(t)
	}
	return out
}

// ProcessDefinition is one immutable version of a registration process.
type ProcessDefinition struct {
	bun.BaseModel  `bun:"table:process_definitions"`
	ID             int64         `bun:"id,pk,autoincrement"`
	OrganisationID int64         `bun:"organisation_id,notnull"`
	Key            string        `bun:"key,notnull"`
	Name           string        `bun:"name,notnull"`
	Category       string        `bun:"category,notnull"`
	Version        int           `bun:"version,notnull"`
	Active         bool          `bun:"active,notnull"`
	ContentHash    string        `bun:"content_hash,notnull"`
	CreatedAt      time.Time     `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	Steps          []ProcessStep `bun:"rel:has-many,join:id=definition_id"`
}

// ProcessStep is one question of a definition. Optional rules are nil when absent.
type ProcessStep struct {
	bun.BaseModel    `bun:"table:process_steps"`
	ID               int64        `bun:"id,pk,autoincrement"`
	DefinitionID     int64        `bun:"definition_id,notnull"`
	OrderIndex       int          `bun:"order_index,notnull"`
	Name             string       `bun:"name,notnull"`
	QuestionText     string       `bun:"question_text,notnull"`
	QuestionType     QuestionType `bun:"question_type,notnull"`
	Required         bool         `bun:"required,notnull"`
	FormatPattern    *string      `bun:"format_pattern"`
	FormatMessage    *string      `bun:"format_message"`
	MinValue         *float64     `bun:"min_value"`
	MaxValue         *float64     `bun:"max_value"`
	PersonMinAge     *int         `bun:"person_min_age"`
	PersonMaxAge     *int         `bun:"person_max_age"`
	PriceCode        *string      `bun:"price_code"`
	PriceLabel       *string      `bun:"price_label"`
	PriceAnswer      *string      `bun:"price_answer"`
	PriceAmountMinor *int64       `bun:"price_amount_minor"`
	MarksTransfer    bool         `bun:"marks_transfer,notnull"`
	// ConsentKind marks a consent step (consents.go); nil: none (an ITC
	// step is a consent all the same).
	ConsentKind *string `bun:"consent_kind"`
	// Texts are the step's texts per language (JSON, engine/definition/texts.go);
	// the columns above hold the default language's. "" when plain.
	Texts   string              `bun:"texts,notnull"`
	Options []ProcessStepOption `bun:"rel:has-many,join:id=step_id"`
}

// ProcessStepOption is a row attached to a step: a choice of a DRP, RDO or
// SEL step (kind CHOICE), or a condition that skips the step or jumps past
// later steps depending on an earlier answer (kind CONDITION, see
// conditions.go). Conditions live in this table because the spec names
// step options as what "define branches between steps".
type ProcessStepOption struct {
	bun.BaseModel `bun:"table:process_step_options"`
	ID            int64      `bun:"id,pk,autoincrement"`
	StepID        int64      `bun:"step_id,notnull"`
	OrderIndex    int        `bun:"order_index,notnull"`
	Kind          OptionKind `bun:"kind,notnull"`
	Value         string     `bun:"value,notnull"` // a choice's value; a condition's name within its step
	Label         string     `bun:"label,notnull"` // a choice's label; a condition's readable form
	// The fields of a condition; nil on choices.
	Action       *ConditionAction   `bun:"cond_action"`
	Scope        *ConditionScope    `bun:"cond_scope"`
	Operator     *ConditionOperator `bun:"cond_operator"`
	SourceStepID *int64             `bun:"source_step_id"`
	MatchValues  *string            `bun:"match_values"` // JSON array of the compared values
	TargetStepID *int64             `bun:"target_step_id"`
}

// OptionKind says what a ProcessStepOption row is.
type OptionKind string

// Kinds of ProcessStepOption rows.
const (
	OptionChoice    OptionKind = "CHOICE"
	OptionCondition OptionKind = "CONDITION"
)

// ProcessState is the stored status of a process instance.
type ProcessState string

// Stored instance statuses. INIT is the person-selection state of a new or reset instance.
const (
	StateNone           ProcessState = "NONE"
	StateInit           ProcessState = "INIT"
	StateRunning        ProcessState = "RUNNING"
	StateResume         ProcessState = "RESUME"
	StateSuspended      ProcessState = "SUSPENDED"
	StateDone           ProcessState = "DONE"
	StatePendingPayment ProcessState = "PENDING_PAYMENT"
	StateCompleted      ProcessState = "COMPLETED"
	StateCancelled      ProcessState = "CANCELLED"
	StateFailed         ProcessState = "FAILED"
	StateError          ProcessState = "ERROR"
)

// Finished reports whether an instance in state s can no longer change.
func Finished(s ProcessState) bool {
	return s == StateCompleted || s == StateCancelled || s == StateFailed
}

// EntityMembership is the related entity type of an instance's memberships.
const EntityMembership = "MEMBERSHIP"

// ProcessInstance is one member's run through a definition.
type ProcessInstance struct {
	bun.BaseModel     `bun:"table:process_instances"`
	ID                int64        `bun:"id,pk,autoincrement"`
	DefinitionID      int64        `bun:"definition_id,notnull"`
	DefinitionKey     string       `bun:"definition_key,notnull"`
	CurrentStepID     *int64       `bun:"current_step_id"`
	Status            ProcessState `bun:"status,notnull"`
	StartTime         time.Time    `bun:"start_time,notnull"`
	EndTime           *time.Time   `bun:"end_time"`
	RelatedEntityType string       `bun:"related_entity_type,notnull"`
	RelatedEntityID   int64        `bun:"related_entity_id,notnull"`
	OrganisationID    int64        `bun:"organisation_id,notnull"`
	UserKey           string       `bun:"user_key,notnull"`
	SelectedPersons   []int64      `bun:"selected_persons,notnull,type:text"`
	Version           int64        `bun:"version,notnull"`
	UpdatedAt         time.Time    `bun:"updated_at,notnull"`
	// Language is the member's language when the registration last moved
	// on (WithLanguage); its e-mails and cards use it. "" is the organisation's default.
	Language   string             `bun:"language,notnull"`
	Period     *MembershipPeriod  `bun:"rel:belongs-to,join:related_entity_id=id"`
	Definition *ProcessDefinition `bun:"rel:belongs-to,join:definition_id=id"`
}

// Data keys of process data.
const (
	DataSelected = "selected"
	DataAnswer   = "answer"
)

// ProcessData is one stored answer (or selection) of one person at one step.
type ProcessData struct {
	bun.BaseModel `bun:"table:process_data"`
	ID            int64     `bun:"id,pk,autoincrement"`
	InstanceID    int64     `bun:"instance_id,notnull"`
	StepID        *int64    `bun:"step_id"`
	PersonID      *int64    `bun:"person_id"`
	DataKey       string    `bun:"data_key,notnull"`
	DataValue     string    `bun:"data_value,notnull"`
	CreatedAt     time.Time `bun:"created_at,notnull"`
}

// The vocabularies of a step's stored conditions (conditions.go says what
// they do).

// ConditionAction is what a condition does when it holds.
type ConditionAction string

// Condition actions, as stored (the definition format spells them in lower case).
const (
	ActionSkip ConditionAction = "SKIP" // leave this step out
	ActionJump ConditionAction = "JUMP" // after this step, continue at a later one
)

// ConditionScope says whose answers a condition reads and whom it affects.
type ConditionScope string

// Condition scopes, as stored (the definition format spells them in lower case).
const (
	// ScopePerson reads each person's own answer and affects that person only.
	ScopePerson ConditionScope = "PERSON"
	// ScopeRegistration holds when it holds for at least one selected
	// person, and then affects the whole registration.
	ScopeRegistration ConditionScope = "REGISTRATION"
)

// ConditionOperator is how a condition compares the earlier answer.
type ConditionOperator string

// Condition operators, as stored.
const (
	OpEquals   ConditionOperator = "EQUALS"
	OpOneOf    ConditionOperator = "ONE_OF"
	OpNotGiven ConditionOperator = "NOT_GIVEN"
)
