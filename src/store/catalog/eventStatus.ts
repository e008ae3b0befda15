/**
 * An event's status as the catalog states it (docs/operations.md §3, contract §15). Only a scheduled or
 * rescheduled event can be matched: a cancelled one did not happen, and a postponed one or one whose date is
 * still to be decided has no date to match against. The event stays in the catalog so a later import can
 * bring it back, and so `catalog lookup` finds it.
 */
export const EVENT_STATUSES = ["scheduled", "rescheduled", "postponed", "cancelled", "date_tbd"] as const;

export type EventStatus = (typeof EVENT_STATUSES)[number];

export const MATCHABLE_STATUSES: readonly EventStatus[] = ["scheduled", "rescheduled"];

/** The same rule as an SQL condition over an events row named `alias`. */
export function matchableCondition(alias: string): string {
  return `${alias}.status in (${MATCHABLE_STATUSES.map((s) => `'${s}'`).join(", ")})`;
}
