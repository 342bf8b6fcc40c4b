import { defineResource } from "./define.ts";

/**
 * The account's change events (the outbox, src/events), as the change feed lists them. Not a resource of the
 * registry: the API writes no event itself and events record none of their own, so it has no routes, type or scopes
 * generated from it; it names what the feed operation (`GET /changes`) returns.
 */
export const changeEvents = defineResource({
  name: "changeEvent",
  model: "ChangeEvent",
  label: "Change Event",
  plural: "changes",
  scope: "changes",
  description: "A change to a record of the account: created, updated or deleted, with the record as REST shows it.",
  operations: [],
  fields: {},
});
